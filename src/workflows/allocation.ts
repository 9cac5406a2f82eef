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
 */
import { condition, continueAsNew, patched, proxyActivities, proxyLocalActivities, setHandler, workflowInfo, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import { ALLOCATION_BATCH, ALLOCATION_IDLE_MS, ALLOCATION_RUN_LIMIT, allocateSignal, AllocationWorkflowInput } from '../temporal/cryptoDefinitions';

const RETRY: RetryPolicy = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' };
const asActivities = proxyActivities<Activities>({ heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT, startToCloseTimeout: '5 minutes', retry: RETRY });
const asLocalActivities = proxyLocalActivities<Activities>({ startToCloseTimeout: '5 minutes', retry: RETRY });
const LOCAL_ACTIVITIES_PATCH = 'allocation-local-activities';

export async function allocationWorkflow(input: AllocationWorkflowInput): Promise<number> {
  const { allocateCryptoTransactions } = patched(LOCAL_ACTIVITIES_PATCH) ? asLocalActivities : asActivities;
  const queue: string[] = [...(input.pending ?? [])];
  setHandler(allocateSignal, (txId: string) => {
    if (!queue.includes(txId)) queue.push(txId);
  });
  let processed = 0;
  for (;;) {
    if (queue.length === 0) {
      const more = await condition(() => queue.length > 0, ALLOCATION_IDLE_MS);
      if (!more) return processed;
    }
    // What is queued goes in one activity (in order, each idempotent), which saves round trips under load.
    const batch = queue.slice(0, ALLOCATION_BATCH);
    await allocateCryptoTransactions(batch);
    queue.splice(0, batch.length);
    processed += batch.length;
    if (processed >= ALLOCATION_RUN_LIMIT || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof allocationWorkflow>({ key: input.key, pending: queue });
    }
  }
}
