/**
 * The Temporal client services use to start and signal workflows. Set once by the process
 * that owns it (API server, worker, or a test with its own environment).
 */
import type { Client } from '@temporalio/client';

export interface TemporalContext {
  client: Client;
  taskQueue: string;
  /** The server has the custom search attributes registered (dev server started by our scripts). */
  searchAttributes?: boolean;
}

let current: TemporalContext | null = null;

export function setTemporal(ctx: TemporalContext | null): void {
  current = ctx;
}

export function getTemporal(): TemporalContext {
  if (!current) throw new Error('Temporal client is not configured');
  return current;
}

export function hasTemporal(): boolean {
  return current !== null;
}
