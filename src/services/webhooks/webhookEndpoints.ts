/**
 * Webhook endpoints: CRUD, secret rotation, the URL rules of docs/adr/0503-webhook-url-rules.md, the delivery log
 * of an endpoint and redelivery.
 */
import { WebhookEndpoint, WebhookEndpointDoc } from '../../models/webhookEndpoint';
import { WebhookDelivery, WebhookDeliveryDoc } from '../../models/webhookDelivery';
import { Event, EventDoc } from '../../models/event';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { newId, ID_PREFIX, randomString } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { heldForApi, writeHeld } from '../writes/heldWrites';
import { isEventName } from '../../lib/eventNames';
import { newSigningSecret } from '../../cryptography/webhookSignature';
import { presentWebhookEndpoint, presentWebhookDelivery } from '../../presenters/webhookEndpoint';
import { listPage, createListed, listScopePage, recountListSlots } from '../writes/listing';
import { optionalText } from '../writes/validate';
import { workflowIds } from '../../temporal/workflowIds';
import { insertDeliveryRecord } from './webhookDispatch';
import type { Dependencies } from '../../dependencies';
import { isPrivateTarget } from '../../lib/outgoingHttp';
import { isAllowedWebhookPort, webhookPortRule } from '../../lib/network';

export interface WebhookEndpointInput {
  url?: string;
  subscriptions?: string[];
  enabled?: boolean;
  description?: string | null;
}

const urlError = (message: string) => ApiError.validation('url', message);
const PRIVATE_MESSAGE = 'must not point to a private, loopback or link-local address';

/**
 * The URL rules at create and update (WEBHOOK_ALLOW_PRIVATE_NETWORKS from config lifts the
 * private-address and port rules); the delivery activity checks the port and the resolved address again.
 */
export async function checkEndpointUrl(deps: Pick<Dependencies, 'config'>, raw: string): Promise<string> {
  const value = raw.trim();
  if (value === '') throw urlError("can't be blank");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw urlError('is not a valid URL');
  }
  if (url.protocol !== 'https:') throw urlError('must be an https:// URL');
  if (url.username || url.password) throw urlError('must not contain credentials');
  const ports = webhookPortRule(deps.config);
  if (!isAllowedWebhookPort(url, ports)) throw urlError(`must use port 443${ports?.length ? ` or one of ${ports.join(', ')}` : ''}`);
  if (deps.config.webhookAllowPrivateNetworks) return value;
  if (await isPrivateTarget(url)) throw urlError(PRIVATE_MESSAGE);
  return value;
}

function checkSubscriptions(raw: string[]): string[] {
  const subs = [...new Set(raw.map((s) => s.trim()))];
  if (subs.length === 0) throw ApiError.validation('subscriptions', 'must contain at least one event name or "*"');
  if (subs.includes('*')) {
    if (subs.length > 1) throw ApiError.validation('subscriptions', 'must be ["*"] alone or a list of event names');
    return subs;
  }
  const unknown = subs.find((s) => !isEventName(s));
  if (unknown !== undefined) throw ApiError.validation('subscriptions', `contains an unknown event name: ${unknown}`);
  return subs;
}

// ---------------------------------------------------------------------------------------------
// Endpoints

export async function findWebhookEndpoint(scope: Scope, id: string, param = 'id'): Promise<WebhookEndpointDoc> {
  const endpoint = await findInScope<WebhookEndpointDoc>(WebhookEndpoint, scope, id);
  if (!endpoint) throw ApiError.notFound('Webhook endpoint not found', param);
  return endpoint;
}

/** Under an Idempotency-Key, a retry after a request that died after its write gets that endpoint and its secret (services/writes/creation.ts). */
export async function createWebhookEndpoint(deps: Dependencies, scope: Scope, input: WebhookEndpointInput & { url: string; subscriptions: string[] }, opts: CreateOptions = {}) {
  const subscriptions = checkSubscriptions(input.subscriptions);
  const url = await checkEndpointUrl(deps, input.url);
  const id = createdId(ID_PREFIX.webhookEndpoint, opts);
  const endpoint = (await earlierAttempt<WebhookEndpointDoc>(WebhookEndpoint, scope, id, opts)) ?? (
    await createListed(WebhookEndpoint, scope, {
      _id: id,
      ...scopeFilter(scope),
      url,
      description: optionalText(input.description) ?? null,
      enabled: input.enabled ?? true,
      subscriptions,
      signing_secret: newSigningSecret(),
    })
  ).toObject() as WebhookEndpointDoc;
  return presentWebhookEndpoint(endpoint, { withSecret: true });
}

export async function getWebhookEndpoint(scope: Scope, id: string) {
  return presentWebhookEndpoint(await findWebhookEndpoint(scope, id));
}

export async function listWebhookEndpoints(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<WebhookEndpointDoc>(WebhookEndpoint, scope, page);
  return { webhook_endpoints: items.map((e) => presentWebhookEndpoint(e)), pagination };
}

/** An API change to an endpoint, as its only writer at that moment (services/writes/heldWrites.ts: the worker's auto-disable writes it too). */
async function writeEndpoint(id: string, plan: (endpoint: WebhookEndpointDoc) => Record<string, unknown>): Promise<WebhookEndpointDoc> {
  return heldForApi(await writeHeld<WebhookEndpointDoc>(WebhookEndpoint, id, plan), 'Webhook endpoint', 'id');
}

export async function updateWebhookEndpoint(deps: Dependencies, scope: Scope, id: string, input: WebhookEndpointInput) {
  const before = await findWebhookEndpoint(scope, id);
  const changes: Record<string, unknown> = {};
  if (input.url !== undefined) changes.url = await checkEndpointUrl(deps, input.url);
  if (input.subscriptions !== undefined) changes.subscriptions = checkSubscriptions(input.subscriptions);
  if (input.description !== undefined) changes.description = optionalText(input.description) ?? null;
  if (input.enabled !== undefined) {
    changes.enabled = input.enabled;
    changes.disabled_reason = null;
  }
  const endpoint = await writeEndpoint(id, () => changes);
  if (before.enabled && !endpoint.enabled) await deps.workflows.webhookDelivery.stopDeliveriesOf(id, 'endpoint_disabled');
  return presentWebhookEndpoint(endpoint);
}

export async function regenerateWebhookSecret(scope: Scope, id: string) {
  await findWebhookEndpoint(scope, id);
  // Deliveries sign at each attempt with the secret read then, so retries use the new one.
  const endpoint = await writeEndpoint(id, () => ({ signing_secret: newSigningSecret() }));
  return presentWebhookEndpoint(endpoint, { withSecret: true });
}

/** Deletes the endpoint and its deliveries (with their attempts); waiting deliveries end at once. */
export async function deleteWebhookEndpoint(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  const removed = await findWebhookEndpoint(scope, id);
  await WebhookEndpoint.deleteOne({ _id: id });
  await recountListSlots(WebhookEndpoint, [removed]);
  // Signal before the records go: the pending ones are found through them. A delivery the
  // signal misses finds the endpoint gone at its next attempt and ends without sending.
  await deps.workflows.webhookDelivery.stopDeliveriesOf(id, 'endpoint_deleted');
  await WebhookDelivery.deleteMany({ endpoint_id: id });
}

// ---------------------------------------------------------------------------------------------
// Deliveries of an endpoint

async function withEvents(deliveries: WebhookDeliveryDoc[]) {
  // One lookup by _id each: FerretDB answers those from its primary key.
  const events = await Promise.all(deliveries.map((d) => Event.findById(d.event_id).lean<EventDoc>()));
  return deliveries.map((d, i) => presentWebhookDelivery(d, events[i]));
}

export async function listWebhookDeliveries(scope: Scope, endpointId: string, page: number) {
  const endpoint = await findWebhookEndpoint(scope, endpointId);
  const { items, pagination } = await listPage<WebhookDeliveryDoc>(WebhookDelivery, { endpoint_id: endpoint._id }, page);
  return { webhook_events: await withEvents(items), pagination };
}

/** A fresh delivery (its own workflow id, so it runs even if the first one succeeded), signed anew. */
export async function redeliverWebhookEvent(deps: Dependencies, scope: Scope, endpointId: string, eventId: string) {
  const endpoint = await findWebhookEndpoint(scope, endpointId);
  const event = await findInScope<EventDoc>(Event, scope, eventId);
  if (!event) throw ApiError.notFound('Event not found', 'event_id');
  if (!endpoint.enabled) throw ApiError.invalid('Webhook endpoint is disabled; enable it before redelivering', 'enabled');
  const deliveryId = `${workflowIds.webhookDelivery(event._id, endpoint._id)}-redelivery-${randomString(12)}`;
  const delivery = await insertDeliveryRecord({ deliveryId, endpoint, event: { id: event._id, event: event.event }, redelivery: true });
  try {
    await deps.workflows.webhookDelivery.start({ deliveryId, eventId: event._id, endpointId: endpoint._id });
  } catch (err) {
    // Nothing will run it: leave no pending record behind (the request may be retried).
    await WebhookDelivery.deleteOne({ _id: deliveryId });
    throw err;
  }
  return presentWebhookDelivery(delivery, event);
}
