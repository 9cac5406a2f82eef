import type { TemporalContext } from '../context';

/** A start or signal against an unreachable server gives up within this instead of hanging the caller. */
export const CLIENT_DEADLINE_MS = 5_000;

/**
 * Sends `signal` to a workflow that may have ended already (a closed invoice, an ended
 * subscription, a used-up link): an error means there is nothing left to tell it.
 */
export async function signalIfRunning(temporal: TemporalContext, workflowId: string, signal: string | { name: string }, ...args: unknown[]): Promise<void> {
  try {
    await temporal.client.workflow.getHandle(workflowId).signal(signal as never, ...(args as never[]));
  } catch {
    // Not running: nothing to tell it.
  }
}
