/**
 * One workflow per customer (or per account and scope for account-wallet payments): the
 * transactions signalled to it are allocated one after another, so payments of one customer
 * never race each other. What is queued is allocated by one activity (up to ALLOCATION_BATCH
 * transactions, in order, each idempotent), retried with backoff while the price oracle is down. Idle for a minute: it completes (the next signalWithStart
 * starts a new run); after ALLOCATION_RUN_LIMIT transactions it continues as new.
 *
 * The activity is local in runs that recorded LOCAL_ACTIVITIES_PATCH: a batch is one workflow
 * task (a marker) instead of a task, an activity task and another task, which was most of the dev
 * server's work per payment. Runs started before keep the regular activity, so their histories
 * still replay.
 *
 * In runs that recorded ONE_IDLE_TIMER_PATCH the idle minute is one timer, left running while
 * transactions come and started again for what is left of the minute when it fires early; before,
 * each wait started a timer and each signal cancelled it: two commands and two history events a
 * payment.
 */
import { condition, continueAsNew, patched, proxyActivities, proxyLocalActivities, setHandler, sleep, workflowInfo, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import { ALLOCATION_BATCH, ALLOCATION_IDLE_MS, ALLOCATION_RUN_LIMIT, allocateSignal, AllocationWorkflowInput } from '../temporal/cryptoDefinitions';

const RETRY: RetryPolicy = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' };
const asActivities = proxyActivities<Activities>({ heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT, startToCloseTimeout: '5 minutes', retry: RETRY });
const asLocalActivities = proxyLocalActivities<Activities>({ startToCloseTimeout: '5 minutes', retry: RETRY });
const LOCAL_ACTIVITIES_PATCH = 'allocation-local-activities';
const ONE_IDLE_TIMER_PATCH = 'allocation-one-idle-timer';

/** A promise whose rejection (the workflow cancelled) is seen by whoever awaits it, not reported as unhandled while nobody does. */
function awaitedLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

export async function allocationWorkflow(input: AllocationWorkflowInput): Promise<number> {
  const { allocateCryptoTransactions } = patched(LOCAL_ACTIVITIES_PATCH) ? asLocalActivities : asActivities;
  const oneIdleTimer = patched(ONE_IDLE_TIMER_PATCH);
  const queue: string[] = [...(input.pending ?? [])];
  setHandler(allocateSignal, (txId: string) => {
    if (!queue.includes(txId)) queue.push(txId);
  });
  let processed = 0;
  // Workflow time of the last batch (or the start): the run completes a minute after it.
  let idleSince = Date.now();
  let idleTimer: Promise<void> | null = null;
  let arrival: Promise<void> | null = null;
  /** Whether a transaction came within the idle minute (false: the minute passed with none). */
  const transactionWithinIdleMinute = async (): Promise<boolean> => {
    for (;;) {
      const idle = Date.now() - idleSince;
      if (idle >= ALLOCATION_IDLE_MS) return false;
      idleTimer ??= awaitedLater(sleep(ALLOCATION_IDLE_MS - idle).then(() => { idleTimer = null; }));
      arrival ??= awaitedLater(condition(() => queue.length > 0).then(() => { arrival = null; }));
      await Promise.race([idleTimer, arrival]);
      if (queue.length > 0) return true;
    }
  };
  for (;;) {
    if (queue.length === 0) {
      const more = oneIdleTimer ? await transactionWithinIdleMinute() : await condition(() => queue.length > 0, ALLOCATION_IDLE_MS);
      if (!more) return processed;
    }
    // What is queued goes in one activity (in order, each idempotent), which saves round trips under load.
    const batch = queue.slice(0, ALLOCATION_BATCH);
    await allocateCryptoTransactions(batch);
    queue.splice(0, batch.length);
    processed += batch.length;
    idleSince = Date.now();
    if (processed >= ALLOCATION_RUN_LIMIT || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof allocationWorkflow>({ key: input.key, pending: queue });
    }
  }
}
