/**
 * One delivery of one event to one endpoint. The workflow owns the retry schedule with durable
 * timers; each attempt is one activity that never retries an HTTP failure itself (only
 * infrastructure errors such as the database being unreachable are retried by Temporal).
 *
 * Attempts run as local activities: the attempt runs inside the workflow task, so a delivery
 * costs Temporal one workflow task instead of two plus an activity task (the dev server's work
 * per delivery was the bottleneck of webhook throughput). Runs started before that change keep
 * their regular activities, so their histories still replay.
 *
 * New runs say so in their input (`localAttempts`), not with `patched()`: the SDK follows a new
 * patch marker with an upsert of the `TemporalChangeVersion` search attribute, which cost every
 * delivery one more history event, a validation and a rewrite of its visibility row (a third of
 * the dev server's visibility writes). Runs started between the two changes recorded the marker
 * and still find it on replay.
 */
import { condition, patched, proxyActivities, proxyLocalActivities, setHandler, type RetryPolicy } from '@temporalio/workflow';
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

// 10 s of HTTP plus database reads and writes.
const START_TO_CLOSE = '1 minute';
const RETRY: RetryPolicy = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' };
const asActivities = proxyActivities<Activities>({ heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT, startToCloseTimeout: START_TO_CLOSE, retry: RETRY });
const asLocalActivities = proxyLocalActivities<Activities>({ startToCloseTimeout: START_TO_CLOSE, retry: RETRY });
/** The patch id recorded by deliveries started before `localAttempts` whose attempts are local activities. */
const LOCAL_ATTEMPTS_PATCH = 'webhook-attempts-as-local-activities';

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<DeliveryResult> {
  // `patched` only for runs without the field: it would record the marker (and the upsert) in a new run.
  const local = input.localAttempts === true || patched(LOCAL_ATTEMPTS_PATCH);
  const { deliverWebhookAttempt, endWebhookDelivery } = local ? asLocalActivities : asActivities;
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
