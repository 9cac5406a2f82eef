/**
 * One workflow per payment claim link: at `expires_at` a link still active becomes `expired`.
 * Used up or deleted first: the service signals it closed and it ends.
 */
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import { claimLinkClosedSignal, ClaimLinkInput } from '../temporal/cryptoDefinitions';

const { expirePaymentClaimLink } = proxyActivities<Activities>({
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

export async function claimLinkWorkflow(input: ClaimLinkInput): Promise<'expired' | 'closed' | 'not_active'> {
  let closed = false;
  setHandler(claimLinkClosedSignal, () => {
    closed = true;
  });
  const wait = Date.parse(input.expiresAt) - Date.now();
  if (wait > 0) await condition(() => closed, wait);
  if (closed) return 'closed';
  return (await expirePaymentClaimLink(input.linkId)) ? 'expired' : 'not_active';
}
