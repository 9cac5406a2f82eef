/** The Temporal client a process starts and signals workflows with (part of its dependencies). */
import type { Client } from '@temporalio/client';

export interface TemporalContext {
  client: Client;
  taskQueue: string;
  /** The server has the custom search attributes registered (dev server started by our scripts). */
  searchAttributes?: boolean;
  /**
   * A worker of this process polls `taskQueue` over the client's own native connection: a start
   * may ask for its first workflow task in the reply (Temporal's eager start), which saves the
   * server a task-queue match and the worker a poll. The SDK falls back to a normal start when
   * that worker has no free slot.
   */
  eagerStart?: boolean;
}
