/**
 * The report-rollup workflow (`reportRollupWorkflow`), one per account and scope, which rebuilds
 * that scope's report rollups after a debounce; each "this rollup is stale" is a
 * signal-with-start through the workflow-start outbox.
 */
import type { Scope } from '../../models/scope';
import type { RollupKind } from '../../models/reportRollup';
import { workflowIds } from '../workflowIds';
import { rollupStaleSignal, ReportRollupWorkflowInput } from '../reportDefinitions';
import { requestWorkflowStart, WorkflowStarts } from '../../services/writes/workflowStarts';

export interface ReportRollupWorkflows {
  /** After a write that changed the source of these rollups (already marked stale): rebuild them. */
  stale(scope: Scope, kinds: RollupKind[]): Promise<void>;
}

export function reportRollupWorkflows(outbox: WorkflowStarts): ReportRollupWorkflows {
  return {
    stale: async (scope, kinds) => {
      const args: [ReportRollupWorkflowInput] = [{ accountId: scope.accountId, sandbox: scope.sandbox, pending: [] }];
      // Keyed by workflow and kind (the default): the latest intent of each replaces the earlier
      // ones, so the kinds' intents are independent and go at once.
      await Promise.all(
        kinds.map((kind) =>
          requestWorkflowStart(outbox, {
            workflowId: workflowIds.reportRollup(scope.accountId, scope.sandbox),
            workflowType: 'reportRollupWorkflow',
            args,
            signal: { name: rollupStaleSignal.name, args: [kind] },
          }),
        ),
      );
    },
  };
}
