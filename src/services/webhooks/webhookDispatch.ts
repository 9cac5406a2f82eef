/**
 * From "event written" to "delivery workflow started". Two paths start the same workflows:
 * the in-process listener right after recordEvent, and a sweeper (webhookSweeper.ts) that picks
 * up events still not `dispatched` (Temporal was down, the process died, the listener failed).
 * The workflow id is derived from (event, endpoint) and REJECT_DUPLICATE refuses a second
 * run even after the first closed, so both paths together start each delivery exactly once.
 */
import { Event } from '../../models/event';
import { WebhookEndpoint, WebhookEndpointDoc } from '../../models/webhookEndpoint';
import { WebhookDelivery, WebhookDeliveryDoc } from '../../models/webhookDelivery';
import { isDuplicateKey } from '../../models/errors';
import type { TemporalContext } from '../../temporal/context';
import { workflowIds } from '../../temporal/workflowIds';
import { startDeliveryWorkflow } from '../../temporal/clients/webhookDelivery';

// The delivery activities end an endpoint's deliveries through here (with their own client).
export { stopDeliveriesOf } from '../../temporal/clients/webhookDelivery';

/** What dispatch needs of an event (a RecordedEvent or an events document). */
export interface DispatchableEvent {
  id: string;
  accountId: string;
  sandbox: string | null;
  event: string;
  timestamp: Date;
}

export function subscribedTo(endpoint: Pick<WebhookEndpointDoc, 'subscriptions'>, event: string): boolean {
  return endpoint.subscriptions.includes('*') || endpoint.subscriptions.includes(event);
}

interface DeliveryRecordInput {
  deliveryId: string;
  endpoint: Pick<WebhookEndpointDoc, '_id' | 'account_id' | 'sandbox'>;
  event: { id: string; event: string };
  redelivery?: boolean;
}

/** A delivery record before its first attempt. */
export function newDeliveryRecord(opts: DeliveryRecordInput): WebhookDeliveryDoc {
  const now = new Date();
  return {
    _id: opts.deliveryId,
    account_id: opts.endpoint.account_id,
    sandbox: opts.endpoint.sandbox ?? null,
    endpoint_id: opts.endpoint._id,
    event_id: opts.event.id,
    event: opts.event.event,
    redelivery: opts.redelivery ?? false,
    status: 'pending',
    ended_reason: null,
    next_attempt_at: null,
    attempts: [],
    created_at: now,
    updated_at: now,
  };
}

/**
 * Writes a delivery record ahead of its first attempt (redeliveries, so the API can answer
 * with it). Idempotent. Regular deliveries get theirs from the first attempt.
 */
export async function insertDeliveryRecord(opts: DeliveryRecordInput): Promise<WebhookDeliveryDoc> {
  const doc = newDeliveryRecord(opts);
  try {
    await WebhookDelivery.collection.insertOne(doc as never);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  return doc;
}

export async function endpointsOf(scope: { accountId: string; sandbox: string | null }): Promise<WebhookEndpointDoc[]> {
  return WebhookEndpoint.find({ account_id: scope.accountId, sandbox: scope.sandbox }).lean<WebhookEndpointDoc[]>();
}

/** The endpoints of `endpoints` that receive `event`: enabled, subscribed to it, and created before it. */
export function recipientsAmong(endpoints: WebhookEndpointDoc[], event: Pick<DispatchableEvent, 'event' | 'timestamp'>): WebhookEndpointDoc[] {
  return endpoints.filter((e) => e.enabled && subscribedTo(e, event.event) && new Date(e.created_at).getTime() <= event.timestamp.getTime());
}

/**
 * Starts the deliveries of one event to every enabled endpoint of its scope subscribed to it
 * (and created before it), then marks the event dispatched. Throws when Temporal cannot be
 * reached; the event stays undispatched and the sweeper tries again.
 */
export async function dispatchEvent(
  temporal: TemporalContext,
  event: DispatchableEvent,
  endpoints?: WebhookEndpointDoc[],
): Promise<number> {
  const targets = recipientsAmong(endpoints ?? (await endpointsOf(event)), event);
  await Promise.all(
    targets.map(async (endpoint) => {
      const deliveryId = workflowIds.webhookDelivery(event.id, endpoint._id);
      await startDeliveryWorkflow(temporal, { deliveryId, eventId: event.id, endpointId: endpoint._id });
    }),
  );
  await Event.updateOne({ _id: event.id }, { $set: { dispatched: true, dispatched_at: new Date() } });
  return targets.length;
}
