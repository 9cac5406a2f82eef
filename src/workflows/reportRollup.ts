/**
 * One workflow per account and scope keeps its report rollups (MRR, collections) rebuilt: every
 * write that changes a rollup's source signals which one went stale (signal-with-start through
 * the workflow-start outbox). Signals are debounced: the rebuild runs once the account has been
 * quiet for ROLLUP_DEBOUNCE_MS, and at most ROLLUP_MAX_DELAY_MS after the first signal, so a
 * burst of payments gives one rebuild. A rebuild is a pure function of the source documents
 * (never an increment), so a repeated signal or a retried activity is harmless. A signal that
 * arrives during a rebuild marks the rollup stale again and gives another one; so does a rebuild
 * that ends dirty (a write marked it meanwhile: writes signal only a current rollup). Idle for
 * ROLLUP_IDLE_MS: it completes; after ROLLUP_RUN_LIMIT rebuilds it continues as new.
 */
import { condition, continueAsNew, patched, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import { ROLLUP_DEBOUNCE_MS, ROLLUP_IDLE_MS, ROLLUP_MAX_DELAY_MS, ROLLUP_RUN_LIMIT, ReportRollupWorkflowInput, RollupKind, rollupStaleSignal } from '../temporal/reportDefinitions';

const { rebuildReportRollup } = proxyActivities<Activities>({
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Runs started before this rebuilt a rollup that ended dirty only on the next signal (their histories replay without it). */
const REBUILD_WHILE_DIRTY_PATCH = 'rollup-rebuild-while-dirty';

export async function reportRollupWorkflow(input: ReportRollupWorkflowInput): Promise<number> {
  const stale = new Set<RollupKind>(input.pending ?? []);
  let signals = 0;
  setHandler(rollupStaleSignal, (kind: RollupKind) => {
    stale.add(kind);
    signals += 1;
  });
  let rebuilt = 0;
  for (;;) {
    if (stale.size === 0) {
      const more = await condition(() => stale.size > 0, ROLLUP_IDLE_MS);
      if (!more) return rebuilt;
    }
    // Debounce: wait for a quiet spell, bounded by the maximum delay since the first signal.
    const first = Date.now();
    for (;;) {
      const seen = signals;
      const left = ROLLUP_MAX_DELAY_MS - (Date.now() - first);
      if (left <= 0 || !(await condition(() => signals !== seen, Math.min(ROLLUP_DEBOUNCE_MS, left)))) break;
    }
    const kinds = [...stale].sort();
    stale.clear();
    const dirty: RollupKind[] = [];
    for (const kind of kinds) {
      const outcome = await rebuildReportRollup({ accountId: input.accountId, sandbox: input.sandbox, kind });
      if (outcome?.current === false) dirty.push(kind);
    }
    rebuilt += kinds.length;
    // Written to while it was rebuilt: writes signal only a rollup that was current (services/
    // reportRollups.ts markChanged), so this one is rebuilt again, after the longest debounce (a
    // burst of writes gets a rebuild every ROLLUP_MAX_DELAY_MS, as it did with a signal per write).
    if (dirty.length > 0 && patched(REBUILD_WHILE_DIRTY_PATCH)) {
      for (const kind of dirty) stale.add(kind);
      await sleep(ROLLUP_MAX_DELAY_MS);
    }
    if (rebuilt >= ROLLUP_RUN_LIMIT || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof reportRollupWorkflow>({ accountId: input.accountId, sandbox: input.sandbox, pending: [...stale] });
    }
  }
}
