import type { Dependencies } from '../../dependencies';
import { startWorkflowStartSweeper, WorkflowStartSweeperOptions } from '../../services/writes/workflowStarts';
import { runPeriodically } from '../../lib/periodic';

export interface WorkflowStartsDomainOptions extends WorkflowStartSweeperOptions {
  /**
   * Transactions still due this long after they were written are signalled again. Longer than
   * the outbox's minimum age: a transaction is due until its allocation finishes, which takes
   * seconds while the price oracle is down (a signal then is only repeated work).
   */
  allocationMinAgeMs: number;
}

const DEFAULTS: WorkflowStartsDomainOptions = {
  // Starts are normally made by the request itself; the sweeper is the safety net (as for webhooks).
  intervalMs: 5_000,
  minAgeMs: 5_000,
  allocationMinAgeMs: 30_000,
  batch: 200,
  purgeEveryMs: 10 * 60_000,
};

/**
 * Start-up of the workflow-start outbox in a process that serves the API or runs the worker: the
 * sweepers that start what Temporal could not take when it was asked (the outbox's intents, and
 * the transactions still due for allocation, which are their own intents). Returns a stop function.
 */
export async function startWorkflowStartsDomain(rt: Pick<Dependencies, 'workflows' | 'logger'>, opts: Partial<WorkflowStartsDomainOptions> = {}): Promise<() => Promise<void>> {
  if (!rt.workflows.outbox) return async () => undefined;
  const settings = { ...DEFAULTS, ...opts };
  const stopStarts = startWorkflowStartSweeper(rt.workflows.outbox, settings);
  const stopAllocations = runPeriodically(async () => {
    try {
      await rt.workflows.allocation.sweep({ minAgeMs: settings.allocationMinAgeMs, batch: settings.batch });
    } catch (err) {
      rt.logger.warn({ err }, 'allocation sweeper pass failed; will retry');
    }
  }, settings.intervalMs);
  return async () => {
    await Promise.all([stopStarts(), stopAllocations()]);
  };
}
