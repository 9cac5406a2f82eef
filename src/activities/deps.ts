import type { Dependencies } from '../dependencies';
import type { WorkerMetrics } from '../metrics/worker';

/**
 * What activities are built from: the process's dependencies (services they call use the same
 * price oracle, settings and workflow clients); tests pass their own (same real database, fake
 * outside services).
 */
export interface ActivityDeps extends Dependencies {
  /** Domain counters of the worker process (built once in worker.ts); a fresh registry when left out. */
  metrics?: WorkerMetrics;
}
