/**
 * The worker's capacity settings, shared by worker.ts and the benches that run a worker of
 * their own, so both measure the same thing.
 *
 * Every webhook delivery and invoice due date is a new workflow whose first task comes on the
 * task queue, never on the sticky queue; with the SDK's defaults (10 polls, a fifth of them on
 * the task queue) a burst of them waits in the server's backlog, which the dev server writes to
 * and reads back from SQLite. Measured in the webhooks bench: 52 -> 60 deliveries/s (1,000 -> 1)
 * and 65 -> 74/s (100 -> 10), and less CPU per delivery (docs/adr/0706-worker-capacity.md).
 */
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config';

export type WorkerCapacity = Pick<
  WorkerOptions,
  'maxCachedWorkflows' | 'maxConcurrentWorkflowTaskPolls' | 'nonStickyToStickyPollRatio' | 'maxConcurrentWorkflowTaskExecutions' | 'workflowThreadPoolSize' | 'stickyQueueScheduleToStartTimeout'
>;

export function workerCapacity(config: Pick<Config, 'workerMaxCachedWorkflows' | 'workerWorkflowTaskPollers' | 'workerMaxConcurrentWorkflowTasks' | 'workerWorkflowThreads' | 'workerStickyTimeoutSeconds'>): WorkerCapacity {
  const cached = config.workerMaxCachedWorkflows;
  return {
    // Each cached workflow keeps its state in the SDK's reused V8 context (about 0.25 MiB measured:
    // worker RSS 860-970 MiB with 1,000 cached). Evicted ones are replayed from their (short)
    // history when they next wake.
    maxCachedWorkflows: cached,
    maxConcurrentWorkflowTaskPolls: config.workerWorkflowTaskPollers,
    // As many polls on the task queue (new workflows) as on the sticky queue (cached ones).
    nonStickyToStickyPollRatio: 1,
    // The SDK refuses more tasks at once than cached workflows (a task needs its workflow in the cache).
    // Two threads, though one V8 context would do: each call into a workflow's context waits for
    // the SDK's execution-timeout watchdog thread to start and stop, which on a loaded 2-core
    // machine kept one thread blocked, not busy, for half of its time (renewals bench profile).
    // With two, one runs while the other waits.
    workflowThreadPoolSize: config.workerWorkflowThreads,
    stickyQueueScheduleToStartTimeout: config.workerStickyTimeoutSeconds * 1000,
    maxConcurrentWorkflowTaskExecutions: cached > 0 ? Math.max(2, Math.min(config.workerMaxConcurrentWorkflowTasks, cached)) : config.workerMaxConcurrentWorkflowTasks,
  };
}
