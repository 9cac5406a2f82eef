import type { DomainRuntime } from '../runtime';

/**
 * Start-up of the crypto domain in a process that serves the API (register cascades and event
 * listeners, start schedules). Returns a stop function.
 */
export async function startCryptoDomain(_rt: DomainRuntime): Promise<() => Promise<void>> {
  return async () => undefined;
}
