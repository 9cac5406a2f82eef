import type { Logger } from 'pino';
import type { Config } from '../config';
import type { WorkerMetrics } from '../metrics/worker';

/** What activities are built from; tests pass their own (same real database, fake outside services). */
export interface ActivityDeps {
  config: Config;
  logger: Logger;
  /** Domain counters of the worker process (built once in worker.ts); a fresh registry when left out. */
  metrics?: WorkerMetrics;
}
