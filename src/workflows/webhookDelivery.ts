/**
 * One delivery of one event to one endpoint. The workflow owns the retry schedule with durable
 * timers; each attempt is one activity that never retries an HTTP failure itself (only
 * infrastructure errors such as the database being unreachable are retried by Temporal).
 */
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import {
  AttemptOutcome,
  DeliveryResult,
  endpointStoppedSignal,
  MAX_ATTEMPTS,
  retryDelayMs,
  WebhookDeliveryInput,
} from '../temporal/webhookDefinitions';

const { deliverWebhookAttempt, endWebhookDelivery } = proxyActivities<Activities>({
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  // 10 s of HTTP plus database reads and writes.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<DeliveryResult> {
  let stopped: 'endpoint_disabled' | 'endpoint_deleted' | null = null;
  setHandler(endpointStoppedSignal, (reason) => {
    stopped = reason;
  });
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    if (stopped) {
      await endWebhookDelivery(input.deliveryId, stopped);
      return 'stopped';
    }
    // Math.random is seeded by Temporal, so the jitter replays identically.
    const delay = attempt < MAX_ATTEMPTS ? retryDelayMs(attempt, Math.random()) : null;
    const outcome: AttemptOutcome = await deliverWebhookAttempt({ ...input, attempt, retryDelayMs: delay });
    if (outcome.result === 'succeeded') return 'succeeded';
    if (outcome.result === 'disabled') return 'endpoint_disabled';
    if (outcome.result === 'stopped') return 'stopped';
    if (delay === null) return 'failed';
    await condition(() => stopped !== null, delay);
  }
  return 'failed';
}
