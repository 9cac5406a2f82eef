/**
 * The state of webhook deliveries in the database: what an attempt reads (its endpoint and
 * event, or the attempt already recorded), how it is recorded, how a delivery ends, disabling
 * an endpoint, and the retention purge. The delivery activities (activities/webhooks.ts) call
 * these around the HTTP request; every write is idempotent, so a retried activity changes nothing.
 */
import type { Client } from '@temporalio/client';
import { Event, EventDoc } from '../../models/event';
import { WebhookEndpoint, WebhookEndpointDoc } from '../../models/webhookEndpoint';
import { AttemptErrorKind, WebhookAttempt, WebhookDelivery, WebhookDeliveryDoc } from '../../models/webhookDelivery';
import { IdempotencyKey } from '../../models/idempotencyKey';
import { isDuplicateKey } from '../../models/errors';
import { writeHeld } from '../writes/heldWrites';
import { sharedReads } from '../../lib/coalesce';
import { newDeliveryRecord, stopDeliveriesOf } from './webhookDispatch';
import { AttemptOutcome, EVENT_RETENTION_MS, IDEMPOTENCY_KEY_RETENTION_MS, MAX_ATTEMPTS } from '../../temporal/webhookDefinitions';

/** What an attempt's HTTP outcome means for the delivery: succeeded, endpoint disabled, or retry. */
export function outcomeOf(a: WebhookAttempt): AttemptOutcome {
  if (a.status_code !== null && a.status_code >= 200 && a.status_code < 300) return { result: 'succeeded', statusCode: a.status_code };
  if (a.error === 'connection_error' || a.error === 'private_address' || a.error === 'port_not_allowed') return { result: 'disabled', error: a.error };
  return { result: 'retry', statusCode: a.status_code, error: a.error };
}

/** The delivery's status after attempt n, with when the next one is due. */
export function deliveryStateAfter(outcome: AttemptOutcome, attempt: number, retryDelayMs: number | null, now: Date) {
  if (outcome.result === 'succeeded') return { status: 'succeeded', ended_reason: null, next_attempt_at: null };
  if (outcome.result === 'disabled') return { status: 'failed', ended_reason: 'endpoint_disabled', next_attempt_at: null };
  if (attempt >= MAX_ATTEMPTS || retryDelayMs === null) return { status: 'failed', ended_reason: 'attempts_exhausted', next_attempt_at: null };
  return { status: 'pending', ended_reason: null, next_attempt_at: new Date(now.getTime() + retryDelayMs) };
}

/** Attempt n as recorded by an earlier try of the same activity, if any. */
export async function recordedAttempt(deliveryId: string, attempt: number): Promise<WebhookAttempt | undefined> {
  const delivery = await WebhookDelivery.findById(deliveryId).lean<WebhookDeliveryDoc>();
  return delivery?.attempts?.[attempt - 1] ?? undefined;
}

/** An endpoint as stored now (null once deleted): a read that starts after the call. */
export type EndpointReader = (endpointId: string) => Promise<WebhookEndpointDoc | null>;

const readEndpointNow: EndpointReader = (endpointId) => WebhookEndpoint.findById(endpointId).lean<WebhookEndpointDoc>();

/**
 * The endpoint reader of a worker's attempts. Concurrent attempts to one endpoint share a read of
 * it that starts after each caller's call (a burst of deliveries to one endpoint reads it once per
 * round trip, not once or twice per delivery), so a caller still sees an endpoint disabled,
 * deleted or given a new secret before its call. The shared document is read-only.
 */
export function sharedEndpointReader(): EndpointReader {
  return sharedReads(readEndpointNow);
}

/** The endpoint and the event of an attempt (null when deleted or purged meanwhile). */
export async function attemptTargets(
  endpointId: string,
  eventId: string,
  readEndpoint: EndpointReader = readEndpointNow,
): Promise<{ endpoint: WebhookEndpointDoc | null; event: EventDoc | null }> {
  const [endpoint, event] = await Promise.all([readEndpoint(endpointId), Event.findById(eventId).lean<EventDoc>()]);
  return { endpoint, event };
}

/**
 * Records attempt n in slot n-1 of the delivery's attempt log, with the delivery's new state.
 * The record is created by the first attempt (one write fewer per delivery than creating it at
 * dispatch); a redelivery's record already exists and the insert falls through. Writing an
 * attempt twice cannot add a second entry.
 */
export async function recordAttempt(opts: {
  deliveryId: string;
  endpoint: WebhookEndpointDoc;
  event: EventDoc;
  record: WebhookAttempt;
  state: ReturnType<typeof deliveryStateAfter>;
  now: Date;
  /** How the endpoint is read again after the first attempt's insert. */
  readEndpoint?: EndpointReader;
}): Promise<void> {
  const { deliveryId, endpoint, event, record, state, now, readEndpoint = readEndpointNow } = opts;
  let written = false;
  if (record.attempt === 1) {
    const doc = newDeliveryRecord({ deliveryId, endpoint, event: { id: event._id, event: event.event } });
    written = await WebhookDelivery.collection
      .insertOne({ ...doc, ...state, attempts: [record], updated_at: now } as never)
      .then(() => true, (err) => (isDuplicateKey(err) ? false : Promise.reject(err)));
    // Deleted while this attempt was in flight: its deliveries are gone, leave none behind.
    if (written && !(await readEndpoint(endpoint._id))) await WebhookDelivery.deleteOne({ _id: deliveryId });
  }
  if (!written) {
    await WebhookDelivery.updateOne({ _id: deliveryId }, { $set: { [`attempts.${record.attempt - 1}`]: record, ...state, updated_at: now } });
  }
}

/** Ends a pending delivery (a delivery already ended keeps its state). */
export async function endDelivery(deliveryId: string, status: 'failed' | 'canceled', reason: string): Promise<void> {
  const d = await WebhookDelivery.findById(deliveryId, { status: 1 }).lean<Pick<WebhookDeliveryDoc, 'status'>>();
  if (!d || d.status !== 'pending') return;
  await WebhookDelivery.updateOne({ _id: deliveryId }, { $set: { status, ended_reason: reason, next_attempt_at: null, updated_at: new Date() } });
}

/** Disables an endpoint after a connection error; its waiting deliveries are told to stop (without a client, they end at their next attempt). */
export async function disableEndpoint(client: Client | null, endpointId: string, reason: AttemptErrorKind): Promise<void> {
  // Held (services/writes/heldWrites.ts), so a change the merchant makes at that moment (a new signing
  // secret, a fixed URL) is not written back over; already disabled: nothing to write.
  const held = await writeHeld<WebhookEndpointDoc>(WebhookEndpoint, endpointId, (endpoint) => (endpoint.enabled === false ? null : { enabled: false, disabled_reason: reason }));
  if (held.result === 'busy') throw new Error(`webhook endpoint ${endpointId} is held by other writers; retrying`);
  await stopDeliveriesOf(client, endpointId, 'endpoint_disabled');
}

/** Retention: events and deliveries (with their attempts) older than 30 days, idempotency keys older than 24 h. */
export async function purgeExpiredRecords(): Promise<{ events: number; deliveries: number; idempotencyKeys: number }> {
  const now = Date.now();
  const eventCutoff = new Date(now - EVENT_RETENTION_MS);
  const [events, deliveries, keys] = await Promise.all([
    Event.deleteMany({ timestamp: { $lt: eventCutoff } }),
    WebhookDelivery.deleteMany({ created_at: { $lt: eventCutoff } }),
    IdempotencyKey.deleteMany({ created_at: { $lt: new Date(now - IDEMPOTENCY_KEY_RETENTION_MS) } }),
  ]);
  return { events: events.deletedCount, deliveries: deliveries.deletedCount, idempotencyKeys: keys.deletedCount };
}
