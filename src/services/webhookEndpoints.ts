/**
 * Webhook endpoints: CRUD, secret rotation, the URL rules of DECISIONS.md, the delivery log
 * of an endpoint and redelivery.
 */
import { lookup } from 'node:dns/promises';
import { WebhookEndpoint, WebhookEndpointDoc } from '../models/webhookEndpoint';
import { WebhookDelivery, WebhookDeliveryDoc } from '../models/webhookDelivery';
import { Event, EventDoc } from '../models/event';
import { Scope, scopeFilter, findInScope } from '../models/scope';
import { newId, ID_PREFIX, randomString } from '../lib/ids';
import { ApiError } from '../lib/errors';
import { isEventName } from '../lib/eventNames';
import { newSigningSecret } from '../crypto/webhookSignature';
import { presentWebhookEndpoint, presentWebhookDelivery } from '../presenters/webhookEndpoint';
import { listPage } from './listing';
import { optionalText } from './validate';
import { getTemporal, hasTemporal } from '../temporal/context';
import { workflowIds } from '../temporal/workflowIds';
import { insertDeliveryRecord, startDeliveryWorkflow, stopDeliveriesOf } from './webhookDispatch';

export interface WebhookEndpointInput {
  url?: string;
  subscriptions?: string[];
  enabled?: boolean;
  description?: string | null;
}

/** Set from config by startWebhooksDomain; off (refuse private targets) until then. */
const settings = { allowPrivateNetworks: false };
export function configureWebhookEndpoints(opts: { allowPrivateNetworks: boolean }): void {
  settings.allowPrivateNetworks = opts.allowPrivateNetworks;
}

// ---------------------------------------------------------------------------------------------
// Address rules (pure; also used by the delivery activity against the resolved address)

function parseIPv4(s: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** Eight 16-bit groups, or null when `s` is not an IPv6 literal. */
function parseIPv6(raw: string): number[] | null {
  let s = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '').toLowerCase();
  if (!s.includes(':')) return null;
  const v4 = /:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (v4) {
    // A trailing dotted quad (::ffff:10.0.0.1) is the last two groups.
    const p = parseIPv4(v4[1]);
    if (!p) return null;
    s = s.slice(0, -v4[1].length) + ((p[0] << 8) | p[1]).toString(16) + ':' + ((p[2] << 8) | p[3]).toString(16);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  const fill = 8 - head.length - rest.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null;
  return [...head, ...Array(fill).fill('0'), ...rest].map((g) => parseInt(g, 16));
}

function privateIPv4([a, b]: number[]): boolean {
  return (
    a === 0 || a === 10 || a === 127 || a >= 224 || // this network, private, loopback, multicast/reserved
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local (cloud metadata lives here)
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments (0.0/24) and 192.0.2/24 documentation
    (a === 198 && (b === 18 || b === 19)) // benchmarking
  );
}

/** True for private, loopback, link-local, unspecified, multicast and reserved addresses (IPv4 or IPv6). */
export function isPrivateAddress(ip: string): boolean {
  const v4 = parseIPv4(ip);
  if (v4) return privateIPv4(v4);
  const g = parseIPv6(ip);
  if (!g) return false;
  const embedded = [g[6] >> 8, g[6] & 0xff];
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible; includes :: and ::1)
    if (g[5] === 0 && g[6] === 0 && g[7] <= 1) return true;
    return privateIPv4(embedded);
  }
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return privateIPv4(embedded); // NAT64
  return (
    (g[0] & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (g[0] & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (g[0] & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (g[0] & 0xff00) === 0xff00 // multicast
  );
}

export function isIpLiteral(host: string): boolean {
  return parseIPv4(host) !== null || parseIPv6(host) !== null;
}

const urlError = (message: string) => ApiError.validation('url', message);
const PRIVATE_MESSAGE = 'must not point to a private, loopback or link-local address';

/** The URL rules at create and update; the delivery activity checks the resolved address again. */
export async function checkEndpointUrl(raw: string): Promise<string> {
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
  if (settings.allowPrivateNetworks) return value;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIpLiteral(host)) {
    if (isPrivateAddress(host)) throw urlError(PRIVATE_MESSAGE);
    return value;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) throw urlError(PRIVATE_MESSAGE);
  // A name that does not resolve yet is accepted (DNS may still be propagating); one that
  // resolves to a private address is not.
  const addresses = await lookup(host, { all: true }).catch(() => []);
  if (addresses.some((a) => isPrivateAddress(a.address))) throw urlError(PRIVATE_MESSAGE);
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

export async function createWebhookEndpoint(scope: Scope, input: WebhookEndpointInput & { url: string; subscriptions: string[] }) {
  const subscriptions = checkSubscriptions(input.subscriptions);
  const url = await checkEndpointUrl(input.url);
  const endpoint = (
    await WebhookEndpoint.create({
      _id: newId(ID_PREFIX.webhookEndpoint),
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
  const { items, pagination } = await listPage<WebhookEndpointDoc>(WebhookEndpoint, scopeFilter(scope), page);
  return { webhook_endpoints: items.map((e) => presentWebhookEndpoint(e)), pagination };
}

export async function updateWebhookEndpoint(scope: Scope, id: string, input: WebhookEndpointInput) {
  const before = await findWebhookEndpoint(scope, id);
  const changes: Record<string, unknown> = {};
  if (input.url !== undefined) changes.url = await checkEndpointUrl(input.url);
  if (input.subscriptions !== undefined) changes.subscriptions = checkSubscriptions(input.subscriptions);
  if (input.description !== undefined) changes.description = optionalText(input.description) ?? null;
  if (input.enabled !== undefined) {
    changes.enabled = input.enabled;
    changes.disabled_reason = null;
  }
  const endpoint = await WebhookEndpoint.findByIdAndUpdate(id, { $set: changes }, { returnDocument: 'after' }).lean<WebhookEndpointDoc>();
  if (!endpoint) throw ApiError.notFound('Webhook endpoint not found', 'id');
  if (before.enabled && !endpoint.enabled) await stopDeliveriesOf(temporalClient(), id, 'endpoint_disabled');
  return presentWebhookEndpoint(endpoint);
}

export async function regenerateWebhookSecret(scope: Scope, id: string) {
  await findWebhookEndpoint(scope, id);
  // Deliveries sign at each attempt with the secret read then, so retries use the new one.
  const endpoint = await WebhookEndpoint.findByIdAndUpdate(id, { $set: { signing_secret: newSigningSecret() } }, { returnDocument: 'after' }).lean<WebhookEndpointDoc>();
  if (!endpoint) throw ApiError.notFound('Webhook endpoint not found', 'id');
  return presentWebhookEndpoint(endpoint, { withSecret: true });
}

/** Deletes the endpoint and its deliveries (with their attempts); waiting deliveries end at once. */
export async function deleteWebhookEndpoint(scope: Scope, id: string): Promise<void> {
  await findWebhookEndpoint(scope, id);
  await WebhookEndpoint.deleteOne({ _id: id });
  // Signal before the records go: the pending ones are found through them. A delivery the
  // signal misses finds the endpoint gone at its next attempt and ends without sending.
  await stopDeliveriesOf(temporalClient(), id, 'endpoint_deleted');
  await WebhookDelivery.deleteMany({ endpoint_id: id });
}

function temporalClient() {
  return hasTemporal() ? getTemporal().client : null;
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
export async function redeliverWebhookEvent(scope: Scope, endpointId: string, eventId: string) {
  const endpoint = await findWebhookEndpoint(scope, endpointId);
  const event = await findInScope<EventDoc>(Event, scope, eventId);
  if (!event) throw ApiError.notFound('Event not found', 'event_id');
  if (!endpoint.enabled) throw ApiError.invalid('Webhook endpoint is disabled; enable it before redelivering', 'enabled');
  const deliveryId = `${workflowIds.webhookDelivery(event._id, endpoint._id)}-redelivery-${randomString(12)}`;
  const delivery = await insertDeliveryRecord({ deliveryId, endpoint, event: { id: event._id, event: event.event }, redelivery: true });
  try {
    await startDeliveryWorkflow(getTemporal(), { deliveryId, eventId: event._id, endpointId: endpoint._id });
  } catch (err) {
    // Nothing will run it: leave no pending record behind (the request may be retried).
    await WebhookDelivery.deleteOne({ _id: deliveryId });
    throw err;
  }
  return presentWebhookDelivery(delivery, event);
}
