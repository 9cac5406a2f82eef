/**
 * Activities of the webhooks domain: one delivery attempt, ending a delivery, and the
 * retention purge. Each is idempotent: an attempt already recorded is answered from the
 * record instead of being sent again.
 */
import https from 'node:https';
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { Event, EventDoc } from '../models/event';
import { WebhookEndpoint, WebhookEndpointDoc } from '../models/webhookEndpoint';
import { AttemptErrorKind, WebhookAttempt, WebhookDelivery, WebhookDeliveryDoc } from '../models/webhookDelivery';
import { IdempotencyKey } from '../models/idempotencyKey';
import { signWebhook } from '../cryptography/webhookSignature';
import { postWebhook } from '../lib/outgoingHttp';
import { newDeliveryRecord, stopDeliveriesOf } from '../services/webhookDispatch';
import { isDuplicateKey } from '../models/errors';
import { createWorkerMetrics, WebhookAttemptOutcome } from '../metrics/worker';
import {
  AttemptInput,
  AttemptOutcome,
  DELIVERY_TIMEOUT_MS,
  EVENT_RETENTION_MS,
  IDEMPOTENCY_KEY_RETENTION_MS,
  MAX_ATTEMPTS,
} from '../temporal/webhookDefinitions';

export interface WebhookActivityDeps extends ActivityDeps {
  /** TLS trust and connection reuse for deliveries (tests pass one trusting their own CA). */
  httpsAgent?: https.Agent;
  /** Overrides DELIVERY_TIMEOUT_MS (tests). */
  deliveryTimeoutMs?: number;
}

function outcomeOf(a: WebhookAttempt): AttemptOutcome {
  if (a.status_code !== null && a.status_code >= 200 && a.status_code < 300) return { result: 'succeeded', statusCode: a.status_code };
  if (a.error === 'connection_error' || a.error === 'private_address') return { result: 'disabled', error: a.error };
  return { result: 'retry', statusCode: a.status_code, error: a.error };
}

/** Temporal's try number of the running activity (1 = first); 0 outside an activity. */
function activityAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 0;
  }
}

export function createWebhooksActivities(deps: WebhookActivityDeps) {
  const agent = deps.httpsAgent ?? new https.Agent({ keepAlive: true, maxSockets: 64 });
  const timeoutMs = deps.deliveryTimeoutMs ?? DELIVERY_TIMEOUT_MS;
  const metrics = deps.metrics ?? createWorkerMetrics();

  async function endDelivery(deliveryId: string, status: 'failed' | 'canceled', reason: string): Promise<void> {
    const d = await WebhookDelivery.findById(deliveryId, { status: 1 }).lean<Pick<WebhookDeliveryDoc, 'status'>>();
    if (!d || d.status !== 'pending') return;
    await WebhookDelivery.updateOne({ _id: deliveryId }, { $set: { status, ended_reason: reason, next_attempt_at: null, updated_at: new Date() } });
  }

  async function disableEndpoint(endpointId: string, reason: AttemptErrorKind): Promise<void> {
    await WebhookEndpoint.updateOne({ _id: endpointId }, { $set: { enabled: false, disabled_reason: reason, updated_at: new Date() } });
    let client = null;
    try {
      client = Context.current().client;
    } catch {
      // Not inside an activity (direct call in a test): the others end at their next attempt.
    }
    await stopDeliveriesOf(client, endpointId, 'endpoint_disabled');
  }

  return {
    /** Attempt n of a delivery: sign with the endpoint's current secret, POST, record. */
    async deliverWebhookAttempt(input: AttemptInput): Promise<AttemptOutcome> {
      const { deliveryId, eventId, endpointId, attempt } = input;
      // On Temporal's first try of this activity nothing can have been recorded yet: skip the read.
      const retried = activityAttempt() !== 1;
      const delivery = retried ? await WebhookDelivery.findById(deliveryId).lean<WebhookDeliveryDoc>() : null;
      const recorded = delivery?.attempts?.[attempt - 1];
      if (recorded) {
        const outcome = outcomeOf(recorded);
        if (outcome.result === 'disabled') await disableEndpoint(endpointId, recorded.error!);
        return outcome;
      }
      const [endpoint, event] = await Promise.all([
        WebhookEndpoint.findById(endpointId).lean<WebhookEndpointDoc>(),
        Event.findById(eventId).lean<EventDoc>(),
      ]);
      if (!endpoint) {
        await endDelivery(deliveryId, 'canceled', 'endpoint_deleted');
        return { result: 'stopped', reason: 'endpoint_deleted' };
      }
      if (!endpoint.enabled) {
        await endDelivery(deliveryId, 'canceled', 'endpoint_disabled');
        return { result: 'stopped', reason: 'endpoint_disabled' };
      }
      if (!event) {
        await endDelivery(deliveryId, 'canceled', 'event_purged');
        return { result: 'stopped', reason: 'event_purged' };
      }
      // Workflow input is not trusted (anyone reaching Temporal can start one): an event goes only to
      // endpoints of its own account and scope. No record is created, so nothing of the event shows
      // in the other account's delivery list; one made before (redelivery) is ended as failed.
      if (event.account_id !== endpoint.account_id || (event.sandbox ?? null) !== (endpoint.sandbox ?? null)) {
        deps.logger.warn({ deliveryId, eventId, endpointId }, 'webhook delivery refused: the event and the endpoint belong to different accounts or scopes');
        await endDelivery(deliveryId, 'failed', 'scope_mismatch');
        return { result: 'stopped', reason: 'scope_mismatch' };
      }

      const body = JSON.stringify({ id: event._id, event: event.event, payload: event.payload, timestamp: new Date(event.timestamp).toISOString() });
      const attemptedAt = new Date();
      const signature = await signWebhook(endpoint.signing_secret, Math.floor(attemptedAt.getTime() / 1000), body);
      const http = await postWebhook(
        endpoint.url,
        {
          'Content-Type': 'application/json',
          'User-Agent': 'payments-webhooks/1',
          'X-Service-Signature': signature,
          'X-Service-Event-Id': event._id,
        },
        body,
        { agent, allowPrivate: deps.config.webhookAllowPrivateNetworks, timeoutMs },
      );
      const record: WebhookAttempt = {
        attempt,
        attempted_at: attemptedAt,
        status_code: http.statusCode,
        error: http.error,
        error_detail: http.errorDetail,
        latency_ms: http.latencyMs,
        response_body: http.body,
      };
      const outcome = outcomeOf(record);
      // Counted once per request sent: an attempt answered from its record above sent nothing.
      const counted: WebhookAttemptOutcome = outcome.result === 'succeeded' ? 'success' : outcome.result === 'disabled' ? 'disabled' : 'failure';
      metrics.webhookAttempts.inc({ outcome: counted });
      const now = new Date();
      const summary =
        outcome.result === 'succeeded'
          ? { status: 'succeeded', ended_reason: null, next_attempt_at: null }
          : outcome.result === 'disabled'
            ? { status: 'failed', ended_reason: 'endpoint_disabled', next_attempt_at: null }
            : attempt >= MAX_ATTEMPTS || input.retryDelayMs === null
              ? { status: 'failed', ended_reason: 'attempts_exhausted', next_attempt_at: null }
              : { status: 'pending', ended_reason: null, next_attempt_at: new Date(now.getTime() + input.retryDelayMs) };
      // The record is created by the first attempt (one write fewer per delivery than creating
      // it at dispatch); a redelivery's record already exists and the insert falls through.
      let written = false;
      if (attempt === 1) {
        const doc = newDeliveryRecord({ deliveryId, endpoint, event: { id: event._id, event: event.event } });
        written = await WebhookDelivery.collection
          .insertOne({ ...doc, ...summary, attempts: [record], updated_at: now } as never)
          .then(() => true, (err) => (isDuplicateKey(err) ? false : Promise.reject(err)));
        // Deleted while this attempt was in flight: its deliveries are gone, leave none behind.
        if (written && !(await WebhookEndpoint.exists({ _id: endpointId }))) await WebhookDelivery.deleteOne({ _id: deliveryId });
      }
      // Attempt n always lands in slot n-1: writing it twice cannot add a second entry.
      if (!written) {
        await WebhookDelivery.updateOne({ _id: deliveryId }, { $set: { [`attempts.${attempt - 1}`]: record, ...summary, updated_at: now } });
      }
      if (outcome.result === 'disabled') {
        deps.logger.warn({ endpointId, error: http.errorDetail }, 'webhook endpoint disabled after a connection error');
        metrics.webhookEndpointsDisabled.inc({ reason: http.error! });
        await disableEndpoint(endpointId, http.error!);
      }
      return outcome;
    },

    /** Marks a delivery ended because its endpoint was disabled or deleted while it waited. */
    async endWebhookDelivery(deliveryId: string, reason: string): Promise<void> {
      await endDelivery(deliveryId, 'canceled', reason);
    },

    /** Retention: events and deliveries (with their attempts) older than 30 days, idempotency keys older than 24 h. */
    async purgeExpiredRecords(): Promise<{ events: number; deliveries: number; idempotencyKeys: number }> {
      const now = Date.now();
      const eventCutoff = new Date(now - EVENT_RETENTION_MS);
      const [events, deliveries, keys] = await Promise.all([
        Event.deleteMany({ timestamp: { $lt: eventCutoff } }),
        WebhookDelivery.deleteMany({ created_at: { $lt: eventCutoff } }),
        IdempotencyKey.deleteMany({ created_at: { $lt: new Date(now - IDEMPOTENCY_KEY_RETENTION_MS) } }),
      ]);
      return { events: events.deletedCount, deliveries: deliveries.deletedCount, idempotencyKeys: keys.deletedCount };
    },
  };
}
