/**
 * One workflow per open invoice: at the end of its due date (UTC) a still-pending invoice
 * becomes overdue. Moving the due date re-arms the timer (the move's signal, or the stored
 * date found when the timer fires); paying, canceling or deleting the invoice ends the workflow.
 */
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import { dueDateChangedSignal, invoiceClosedSignal, InvoiceDueInput } from '../temporal/invoiceDefinitions';
import { overdueAt } from '../billing/dueDate';

const { markInvoiceOverdue } = proxyActivities<Activities>({
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

export async function invoiceDueWorkflow(input: InvoiceDueInput): Promise<'overdue' | 'closed' | 'not_pending'> {
  let dueDate = input.dueDate;
  let moved = false;
  let closed = false;
  setHandler(dueDateChangedSignal, (d) => {
    dueDate = d;
    moved = true;
  });
  setHandler(invoiceClosedSignal, () => {
    closed = true;
  });
  for (;;) {
    moved = false;
    const wait = overdueAt(dueDate) - Date.now();
    if (wait > 0) await condition(() => closed || moved, wait);
    if (closed) return 'closed';
    if (moved) continue;
    const outcome = await markInvoiceOverdue(input.invoiceId, dueDate);
    // Still pending with another due date (a move whose signal was lost): wait for that one.
    if (typeof outcome === 'object' && outcome !== null) {
      dueDate = outcome.dueDateMoved;
      continue;
    }
    return outcome ? 'overdue' : 'not_pending';
  }
}
