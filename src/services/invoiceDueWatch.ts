/**
 * Keeps one due-date workflow per open invoice. Starting is idempotent (workflow id per
 * invoice); without a Temporal client (plain API tests) it is skipped.
 */
import { startOnce } from '../temporal/startOnce';
import { InvoiceDoc } from '../models/invoice';
import { getTemporal, hasTemporal } from '../temporal/context';
import { workflowIds } from '../temporal/workflowIds';
import { dueDateChangedSignal, invoiceClosedSignal } from '../temporal/invoiceDefinitions';
import type { invoiceDueWorkflow } from '../workflows/invoiceDue';

export async function watchDueDate(invoice: InvoiceDoc, dueDateMoved = false): Promise<void> {
  if (!hasTemporal()) return;
  const { client, taskQueue } = getTemporal();
  const workflowId = workflowIds.invoiceDue(invoice._id);
  if (dueDateMoved) {
    await client.workflow.signalWithStart<typeof invoiceDueWorkflow, [string]>('invoiceDueWorkflow', {
      workflowId,
      taskQueue,
      args: [{ invoiceId: invoice._id, dueDate: invoice.due_date }],
      signal: dueDateChangedSignal,
      signalArgs: [invoice.due_date],
    });
    return;
  }
  await startOnce(() =>
    client.workflow.start<typeof invoiceDueWorkflow>('invoiceDueWorkflow', {
      workflowId,
      taskQueue,
      args: [{ invoiceId: invoice._id, dueDate: invoice.due_date }],
    }),
  );
}

export async function closeDueWatch(invoiceId: string): Promise<void> {
  if (!hasTemporal()) return;
  try {
    await getTemporal().client.workflow.getHandle(workflowIds.invoiceDue(invoiceId)).signal(invoiceClosedSignal);
  } catch {
    // No running workflow: nothing to close.
  }
}
