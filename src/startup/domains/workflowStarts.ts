import type { Dependencies } from '../../dependencies';
import { startWorkflowStartSweeper, WorkflowStartSweeperOptions } from '../../services/workflowStarts';

const DEFAULTS: WorkflowStartSweeperOptions = {
  // Starts are normally made by the request itself; the sweeper is the safety net (as for webhooks).
  intervalMs: 5_000,
  minAgeMs: 5_000,
  batch: 200,
  purgeEveryMs: 10 * 60_000,
};

/**
 * Start-up of the workflow-start outbox in a process that serves the API or runs the worker: the
 * sweeper that starts what Temporal could not take when it was asked. Returns a stop function.
 */
export async function startWorkflowStartsDomain(rt: Pick<Dependencies, 'workflows'>, opts: Partial<WorkflowStartSweeperOptions> = {}): Promise<() => Promise<void>> {
  if (!rt.workflows.outbox) return async () => undefined;
  return startWorkflowStartSweeper(rt.workflows.outbox, { ...DEFAULTS, ...opts });
}
