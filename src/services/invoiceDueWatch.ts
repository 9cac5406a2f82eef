/**
 * Keeps one due-date workflow per open invoice. Starting is idempotent (workflow id per
 * invoice) and goes through the workflow-start outbox, so a write answers while Temporal is
 * down; without a Temporal client (plain API tests) it is skipped.
 */
import { Invoice, InvoiceDoc } from '../models/invoice';
import { getTemporal, hasTemporal } from '../temporal/context';
import { workflowIds } from '../temporal/workflowIds';
import { dueDateChangedSignal, invoiceClosedSignal, InvoiceDueInput } from '../temporal/invoiceDefinitions';
import type { invoiceDueWorkflow } from '../workflows/invoiceDue';
import { PendingStart, recordWorkflowStart, requestWorkflowStart, WorkflowStartRequest } from './workflowStarts';

type Due = Pick<InvoiceDoc, '_id' | 'due_date'>;

function dueWatchStart(invoice: Due, dueDateMoved: boolean): WorkflowStartRequest<Parameters<typeof invoiceDueWorkflow>> {
  const workflowId = workflowIds.invoiceDue(invoice._id);
  const args: [InvoiceDueInput] = [{ invoiceId: invoice._id, dueDate: invoice.due_date }];
  const start = { workflowId, workflowType: 'invoiceDueWorkflow', args };
  if (!dueDateMoved) return start;
  // One intent per invoice for moves: a later move replaces an earlier one not sent yet.
  return { ...start, signal: { name: dueDateChangedSignal.name, args: [invoice.due_date] }, key: `${workflowId}:${dueDateChangedSignal.name}` };
}

/** After a write that leaves the invoice pending: start its workflow, or re-arm it when the due date moved. */
export async function watchDueDate(invoice: Due, dueDateMoved = false): Promise<void> {
  await requestWorkflowStart(dueWatchStart(invoice, dueDateMoved));
}

/** Before a new pending invoice is written: its workflow's start, recorded; `start()` it once the invoice is stored. */
export async function planDueWatch(invoice: Due): Promise<PendingStart> {
  return recordWorkflowStart({ ...dueWatchStart(invoice, false), resource: { collection: Invoice.collection.collectionName, id: invoice._id } });
}

export async function closeDueWatch(invoiceId: string): Promise<void> {
  if (!hasTemporal()) return;
  try {
    await getTemporal().client.workflow.getHandle(workflowIds.invoiceDue(invoiceId)).signal(invoiceClosedSignal);
  } catch {
    // No running workflow: nothing to close.
  }
}
