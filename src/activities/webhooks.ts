/**
 * Activities of the webhooks domain: one delivery attempt, ending a delivery, and the
 * retention purge. Each is idempotent: an attempt already recorded is answered from the
 * record instead of being sent again. The database side is services/webhooks/webhookDeliveries.ts, the
 * HTTP request lib/outgoingHttp.ts; this file puts them in order and counts what was sent.
 */
import https from 'node:https';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ActivityDeps } from './deps';
import type { WebhookAttempt } from '../models/webhookDelivery';
import { signWebhook } from '../cryptography/webhookSignature';
import { postWebhook } from '../lib/outgoingHttp';
import { webhookPortRule } from '../lib/network';
import {
  attemptTargets,
  sharedEndpointReader,
  deliveryStateAfter,
  disableEndpoint,
  endDelivery,
  outcomeOf,
  purgeExpiredRecords,
  recordAttempt,
  recordedAttempt,
} from '../services/webhooks/webhookDeliveries';
import { createWorkerMetrics, WebhookAttemptOutcome } from '../metrics/worker';
import { AttemptInput, AttemptOutcome, DELIVERY_TIMEOUT_MS } from '../temporal/webhookDefinitions';

export interface WebhookActivityDeps extends ActivityDeps {
  /** TLS trust and connection reuse for deliveries (tests pass one trusting their own CA). */
  httpsAgent?: https.Agent;
  /** Overrides DELIVERY_TIMEOUT_MS (tests). */
  deliveryTimeoutMs?: number;
}

/** Temporal's try number of the running activity (1 = first); 0 outside an activity. */
function activityAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 0;
  }
}

/** The running activity's Temporal client; null outside an activity (direct call in a test). */
function activityClient(): Client | null {
  try {
    return Context.current().client;
  } catch {
    return null;
  }
}

export function createWebhooksActivities(deps: WebhookActivityDeps) {
  const agent = deps.httpsAgent ?? new https.Agent({ keepAlive: true, maxSockets: 64 });
  const timeoutMs = deps.deliveryTimeoutMs ?? DELIVERY_TIMEOUT_MS;
  const metrics = deps.metrics ?? createWorkerMetrics();
  const readEndpoint = sharedEndpointReader();

  return {
    /** Attempt n of a delivery: sign with the endpoint's current secret, POST, record. */
    async deliverWebhookAttempt(input: AttemptInput): Promise<AttemptOutcome> {
      const { deliveryId, eventId, endpointId, attempt } = input;
      // On Temporal's first try of this activity nothing can have been recorded yet: skip the read.
      const recorded = activityAttempt() !== 1 ? await recordedAttempt(deliveryId, attempt) : undefined;
      if (recorded) {
        const outcome = outcomeOf(recorded);
        if (outcome.result === 'disabled') await disableEndpoint(activityClient(), endpointId, recorded.error!);
        return outcome;
      }
      const { endpoint, event } = await attemptTargets(endpointId, eventId, readEndpoint);
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
        { agent, allowPrivate: deps.config.webhookAllowPrivateNetworks, allowedPorts: webhookPortRule(deps.config), timeoutMs },
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
      await recordAttempt({ deliveryId, endpoint, event, record, state: deliveryStateAfter(outcome, attempt, input.retryDelayMs, now), now, readEndpoint });
      if (outcome.result === 'disabled') {
        deps.logger.warn({ endpointId, error: http.errorDetail }, 'webhook endpoint disabled after a connection error');
        metrics.webhookEndpointsDisabled.inc({ reason: http.error! });
        await disableEndpoint(activityClient(), endpointId, http.error!);
      }
      return outcome;
    },

    /** Marks a delivery ended because its endpoint was disabled or deleted while it waited. */
    async endWebhookDelivery(deliveryId: string, reason: string): Promise<void> {
      await endDelivery(deliveryId, 'canceled', reason);
    },

    purgeExpiredRecords,
  };
}
