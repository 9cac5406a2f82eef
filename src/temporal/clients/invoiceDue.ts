/**
 * The invoice due-date workflow (`invoiceDueWorkflow`), one per open invoice, started by type
 * name through the workflow-start outbox: started for a pending invoice, re-armed when its due
 * date moves, closed when it is paid, canceled or deleted.
 */
import type { InvoiceDoc } from '../../models/invoice';
import { Invoice } from '../../models/invoice';
import type { TemporalContext } from '../context';
import { workflowIds } from '../workflowIds';
import { dueDateChangedSignal, invoiceClosedSignal, InvoiceDueInput } from '../invoiceDefinitions';
import { PendingStart, recordWorkflowStart, requestWorkflowStart, WorkflowStartRequest, WorkflowStarts } from '../../services/writes/workflowStarts';
import { signalIfRunning } from './signal';
import { overdueAt } from '../../billing/dueDate';

type Due = Pick<InvoiceDoc, '_id' | 'due_date'>;

export interface InvoiceDueWorkflows {
  /** After a write that leaves the invoice pending: start its workflow, or re-arm it when the due date moved. */
  watch(invoice: Due, dueDateMoved?: boolean): Promise<void>;
  /** Before a new pending invoice is written: its workflow's start, recorded; `start()` it once the invoice is stored. */
  plan(invoice: Due): Promise<PendingStart>;
  /** Paid, canceled or deleted: nothing left to watch. */
  close(invoiceId: string): Promise<void>;
}

function dueWatchStart(invoice: Due, dueDateMoved: boolean): WorkflowStartRequest<[InvoiceDueInput]> {
  const workflowId = workflowIds.invoiceDue(invoice._id);
  const args: [InvoiceDueInput] = [{ invoiceId: invoice._id, dueDate: invoice.due_date }];
  const start = { workflowId, workflowType: 'invoiceDueWorkflow', args };
  // Its first task at the due date's end: until then the workflow only waits, and a workflow
  // task now would cost the server and a worker cache slot per new invoice (a renewal made its
  // due date's workflow evict a subscription's from the cache). Signals wait with it: a close
  // is seen at that first task; a moved due date (signal-with-start) wakes it at once.
  if (!dueDateMoved) return { ...start, firstTaskAt: new Date(overdueAt(invoice.due_date)) };
  // One intent per invoice for moves: a later move replaces an earlier one not sent yet.
  return { ...start, signal: { name: dueDateChangedSignal.name, args: [invoice.due_date] }, key: `${workflowId}:${dueDateChangedSignal.name}` };
}

export function invoiceDueWorkflows(temporal: TemporalContext, outbox: WorkflowStarts): InvoiceDueWorkflows {
  return {
    watch: (invoice, dueDateMoved = false) => requestWorkflowStart(outbox, dueWatchStart(invoice, dueDateMoved)),
    plan: (invoice) => recordWorkflowStart(outbox, { ...dueWatchStart(invoice, false), resource: { collection: Invoice.collection.collectionName, id: invoice._id } }),
    close: (invoiceId) => signalIfRunning(temporal, workflowIds.invoiceDue(invoiceId), invoiceClosedSignal),
  };
}
