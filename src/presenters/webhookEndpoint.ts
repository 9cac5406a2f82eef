import type { WebhookEndpointDoc } from '../models/webhookEndpoint';
import type { WebhookAttempt, WebhookDeliveryDoc } from '../models/webhookDelivery';
import type { EventDoc } from '../models/event';
import { iso } from './common';

/** The full secret only from create and regenerate_secret; every other read shows the last four characters. */
export function presentWebhookEndpoint(e: WebhookEndpointDoc, opts: { withSecret?: boolean } = {}) {
  return {
    id: e._id,
    url: e.url,
    description: e.description ?? null,
    enabled: e.enabled,
    subscriptions: [...e.subscriptions],
    signing_secret_last4: e.signing_secret.slice(-4),
    ...(opts.withSecret ? { signing_secret: e.signing_secret } : {}),
    /** Set when a connection error on delivery disabled the endpoint. */
    disabled_reason: e.disabled_reason ?? null,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}

export function presentWebhookAttempt(a: WebhookAttempt) {
  return {
    attempt: a.attempt,
    attempted_at: iso(a.attempted_at),
    status_code: a.status_code ?? null,
    error: a.error ?? null,
    error_detail: a.error_detail ?? null,
    latency_ms: a.latency_ms,
    response_body: a.response_body ?? null,
  };
}

/** One delivery of one event to the endpoint, with every attempt; `payload` is null once the event is purged. */
export function presentWebhookDelivery(d: WebhookDeliveryDoc, event: EventDoc | null) {
  const attempts = (d.attempts ?? []).filter((a): a is WebhookAttempt => !!a).map(presentWebhookAttempt);
  return {
    id: d._id,
    object: 'webhook_delivery',
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event: d.event,
    payload: event?.payload ?? null,
    timestamp: event ? iso(event.timestamp) : null,
    redelivery: d.redelivery ?? false,
    status: d.status,
    ended_reason: d.ended_reason ?? null,
    attempt_count: attempts.length,
    next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
    attempts,
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
  };
}
