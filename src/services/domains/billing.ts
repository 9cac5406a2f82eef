import type { DomainRuntime } from '../runtime';

/**
 * Start-up of the billing domain in a process that serves the API (register cascades and event
 * listeners, start schedules). Returns a stop function.
 */
export async function startBillingDomain(_rt: DomainRuntime): Promise<() => Promise<void>> {
  return async () => undefined;
}
