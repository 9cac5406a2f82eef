/** Wires the domains into a running API or worker process (and into test apps). */
import type { Dependencies } from '../dependencies';
import { startWebhooksDomain } from './domains/webhooks';
import { startWorkflowStartsDomain } from './domains/workflowStarts';
import { startCreditReleasesDomain } from './domains/creditReleases';

/** The loops and listeners of the domains (webhook dispatch, the sweepers); returns a stop function. */
export async function startDomains(deps: Dependencies): Promise<() => Promise<void>> {
  const stops = [await startWebhooksDomain(deps), await startWorkflowStartsDomain(deps), await startCreditReleasesDomain(deps)];
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
