/** The Temporal client a process starts and signals workflows with (part of its dependencies). */
import type { Client } from '@temporalio/client';

export interface TemporalContext {
  client: Client;
  taskQueue: string;
  /** The server has the custom search attributes registered (dev server started by our scripts). */
  searchAttributes?: boolean;
}
