/**
 * The floor's workflows (bench/floor.ts): the least Temporal work the design asks of a payment,
 * a renewal and a delivery, with nothing of the service's own code. Each runs its work as one
 * local activity, as the service's workflows do.
 */
import { condition, defineSignal, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { FloorActivities } from './floor';

const { floorAllocate, floorRenew, floorDeliver } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export const floorPaymentSignal = defineSignal<[string]>('floorPayment');
export const floorCloseSignal = defineSignal('floorClose');

/** One per customer: the payments signalled to it allocated one after another; idle for a minute, it completes. */
export async function floorAllocationWorkflow(customerId: string): Promise<void> {
  const queue: string[] = [];
  setHandler(floorPaymentSignal, (txId) => void queue.push(txId));
  for (;;) {
    if (queue.length === 0 && !(await condition(() => queue.length > 0, '1 minute'))) return;
    const batch = queue.splice(0, queue.length);
    await floorAllocate(customerId, batch);
  }
}

/**
 * An invoice's due date: started with a start delay until then (no task before it, as the service's
 * own), it marks the invoice overdue unless a close signal came first.
 */
export async function floorDueWorkflow(): Promise<boolean> {
  let closed = false;
  setHandler(floorCloseSignal, () => void (closed = true));
  return !closed;
}

/** A subscription: at its billing instant, one renewal; then it waits for the next period. */
export async function floorSubscriptionWorkflow(subscriptionId: string, billAt: number): Promise<void> {
  await sleep(Math.max(1, billAt - Date.now()));
  await floorRenew(subscriptionId);
  await sleep('30 days');
}

/** One delivery of one event to one endpoint: one attempt. */
export async function floorDeliveryWorkflow(eventId: string, endpointId: string): Promise<void> {
  await floorDeliver(eventId, endpointId);
}
