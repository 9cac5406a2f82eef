/** Wires the domains into a running API process (and into test apps). */
import type { Logger } from 'pino';
import type { Config } from '../config';
import { setTemporal, TemporalContext } from '../temporal/context';
import { startBillingDomain } from './domains/billing';
import { startCryptoDomain } from './domains/crypto';
import { startWebhooksDomain } from './domains/webhooks';
import { startWorkflowStartsDomain } from './domains/workflowStarts';

export interface DomainRuntime {
  config: Config;
  logger: Logger;
  temporal: TemporalContext | null;
}

export async function startDomains(rt: DomainRuntime): Promise<() => Promise<void>> {
  setTemporal(rt.temporal);
  const stops = [await startBillingDomain(rt), await startCryptoDomain(rt), await startWebhooksDomain(rt), await startWorkflowStartsDomain(rt)];
  return async () => {
    for (const stop of stops.reverse()) await stop();
    setTemporal(null);
  };
}
