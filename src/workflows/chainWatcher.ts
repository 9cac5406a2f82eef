/**
 * One long-running watcher per currency (`chain-watcher-<currency>`): scan, then sleep one poll
 * interval when caught up with the tip, forever. The cursor (last block scanned) lives in the
 * workflow and is handed on when it continues as new; the scan activity also stores it.
 * The poll interval comes back from the activity, so configuration stays out of workflow code.
 */
import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import { CHAIN_WATCHER_RUN_LIMIT, chainCursorQuery, chainPollNowSignal, ChainWatcherInput } from '../temporal/cryptoDefinitions';

const { scanChain } = proxyActivities<Activities>({
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  startToCloseTimeout: '5 minutes',
  // The node is down or answered mid-reorg: try again, backing off up to a minute.
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function chainWatcherWorkflow(input: ChainWatcherInput): Promise<void> {
  let cursor = input.cursor;
  let pollNow = false;
  setHandler(chainCursorQuery, () => cursor);
  setHandler(chainPollNowSignal, () => {
    pollNow = true;
  });
  for (let scans = 0; scans < CHAIN_WATCHER_RUN_LIMIT && !workflowInfo().continueAsNewSuggested; scans++) {
    pollNow = false;
    const result = await scanChain(input.currency, cursor);
    // The currency's node is no longer configured: nothing to watch.
    if (!result) return;
    cursor = result.cursor;
    if (result.caughtUp) await condition(() => pollNow, result.pollMs);
  }
  await continueAsNew<typeof chainWatcherWorkflow>({ currency: input.currency, cursor });
}
