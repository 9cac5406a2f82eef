/**
 * Activities of the webhooks domain: one delivery attempt, ending a delivery, and the
 * retention purge. Each is idempotent: an attempt already recorded is answered from the
 * record instead of being sent again.
 */
import https from 'node:https';
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { Event, EventDoc } from '../models/event';
import { WebhookEndpoint, WebhookEndpointDoc } from '../models/webhookEndpoint';
import { AttemptErrorKind, WebhookAttempt, WebhookDelivery, WebhookDeliveryDoc } from '../models/webhookDelivery';
import { IdempotencyKey } from '../models/idempotencyKey';
import { signWebhook } from '../cryptography/webhookSignature';
import { isIpLiteral, isPrivateAddress } from '../lib/network';
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
  RESPONSE_SNIPPET_BYTES,
} from '../temporal/webhookDefinitions';

export interface WebhookActivityDeps extends ActivityDeps {
  /** TLS trust and connection reuse for deliveries (tests pass one trusting their own CA). */
  httpsAgent?: https.Agent;
  /** Overrides DELIVERY_TIMEOUT_MS (tests). */
  deliveryTimeoutMs?: number;
}

export interface HttpOutcome {
  statusCode: number | null;
  error: AttemptErrorKind | null;
  errorDetail: string | null;
  latencyMs: number;
  body: string | null;
}

class PrivateAddressError extends Error {
  code = 'PRIVATE_ADDRESS';
}

/** Errors of a reused keep-alive socket that the other side had already closed. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);
/** The agent may hand out several stale sockets in a row. */
const MAX_STALE_SOCKET_RETRIES = 3;
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED', 'EADDRNOTAVAIL']);

/** Connection error (refused, reset before a response, DNS failure) disables; timeouts and TLS errors retry. */
export function classifyRequestError(err: unknown): { kind: AttemptErrorKind; detail: string } {
  const e = err as { code?: string; message?: string };
  const code = e?.code ?? '';
  const detail = code || e?.message || 'unknown error';
  if (err instanceof PrivateAddressError) return { kind: 'private_address', detail: e.message! };
  if (code === 'ETIMEDOUT') return { kind: 'timeout', detail };
  if (CONNECTION_CODES.has(code)) return { kind: 'connection_error', detail };
  // Certificate and handshake failures: OpenSSL codes, ERR_TLS_*/ERR_SSL_*, EPROTO.
  return { kind: 'tls_error', detail };
}

/** DNS resolution that refuses private addresses, so the address checked is the address connected to. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      if (!allowPrivate) {
        const bad = addresses.find((a) => isPrivateAddress(a.address));
        if (bad) return callback(new PrivateAddressError(`${hostname} resolves to ${bad.address}`));
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}

/** One signed POST: status and the first 1 KiB of the body, or the kind of error. Never throws. */
export function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { agent: https.Agent; allowPrivate: boolean; timeoutMs: number },
): Promise<HttpOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (r: Omit<HttpOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, latencyMs: Math.round(performance.now() - started) });
    };
    const fail = (err: unknown) => {
      const { kind, detail } = classifyRequestError(err);
      finish({ statusCode: null, error: kind, errorDetail: detail, body: null });
    };
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // An IP literal is connected to without a lookup, so check it here.
    if (!opts.allowPrivate && isIpLiteral(host) && isPrivateAddress(host)) {
      fail(new PrivateAddressError(`${host} is a private address`));
      return;
    }
    let req: ReturnType<typeof https.request>;
    timer = setTimeout(() => {
      finish({ statusCode: null, error: 'timeout', errorDetail: `no complete response within ${opts.timeoutMs} ms`, body: null });
      req.destroy();
    }, opts.timeoutMs);
    const send = (staleRetries: number) => {
      req = https.request(
        target,
        {
          method: 'POST',
          agent: opts.agent,
          lookup: guardedLookup(opts.allowPrivate),
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            if (size < RESPONSE_SNIPPET_BYTES) chunks.push(c);
            size += c.length;
          });
          const done = () =>
            finish({
              statusCode: res.statusCode ?? null,
              error: null,
              errorDetail: null,
              body: Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES).toString('utf8'),
            });
          res.on('end', done);
          // The status arrived; a body cut short does not change what the receiver answered.
          res.on('error', done);
          res.on('aborted', done);
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the receiver closed meanwhile fails at once: not the endpoint being
        // down (which disables it), so the request goes again on another socket (Node's advice;
        // receivers dedupe on the event id).
        if (!settled && req.reusedSocket && STALE_SOCKET_CODES.has(err.code ?? '') && staleRetries > 0) send(staleRetries - 1);
        else fail(err);
      });
      req.end(body);
    };
    send(MAX_STALE_SOCKET_RETRIES);
  });
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
