/**
 * Writes the event of every change. Every service that changes a resource calls
 * `recordEvent` after its write; nothing else writes to the events collection.
 */
import { Event } from '../../models/event';
import { Scope } from '../../models/scope';
import { EventName } from '../../lib/eventNames';
import { newId, derivedId, ID_PREFIX } from '../../lib/ids';
import { isDuplicateKey } from '../../models/errors';
import type { WebhookEndpointDoc } from '../../models/webhookEndpoint';

export interface EventPayload {
  id: string;
  object: string;
  [key: string]: unknown;
}

export interface RecordedEvent {
  id: string;
  accountId: string;
  sandbox: string | null;
  event: EventName;
  payload: EventPayload;
  timestamp: Date;
}

/**
 * Webhook dispatch as the webhooks domain of a process with Temporal registers it. Recipients are
 * looked up before the event is written, so an event nobody receives is written as dispatched:
 * one write instead of a write and an update (most events of most writes), and nothing for the
 * sweeper. Without a dispatcher (or when the lookup fails) the event is written undispatched and
 * a sweeper finds it, as before.
 */
export interface EventDispatcher {
  /** The endpoints that will receive the event (before it is written). */
  recipientsOf(event: RecordedEvent): Promise<WebhookEndpointDoc[]>;
  /** Starts its deliveries once written (null recipients: look them up again). Failures are the sweeper's. */
  dispatch(event: RecordedEvent, recipients: WebhookEndpointDoc[] | null): Promise<void>;
}
const dispatchers: EventDispatcher[] = [];

/** Lets webhook dispatch start deliveries right away; a sweeper covers dispatch failures. */
export function onEventRecorded(dispatcher: EventDispatcher): () => void {
  dispatchers.push(dispatcher);
  return () => {
    const i = dispatchers.indexOf(dispatcher);
    if (i >= 0) dispatchers.splice(i, 1);
  };
}

/** The event id an idempotency key always maps to, so a retried activity writes its event once. */
export function eventIdFor(key: string): string {
  return derivedId(ID_PREFIX.event, key);
}

export interface RecordEventOptions {
  at?: Date;
  /** Same key, same event: a second call writes nothing and notifies no one. */
  idempotencyKey?: string;
}

export async function recordEvent(scope: Scope, event: EventName, payload: EventPayload, opts: RecordEventOptions = {}): Promise<RecordedEvent> {
  const [recorded] = await recordEvents(scope, [{ event, payload, ...opts }]);
  return recorded;
}

export interface EventToRecord extends RecordEventOptions {
  event: EventName;
  payload: EventPayload;
}

interface WriteFailure {
  index: number;
  code?: unknown;
  errmsg?: string;
}

/**
 * Several events of one change, in order, in one write (`insertMany`, unordered so a keyed event
 * already written skips alone); each is dispatched as `recordEvent` would. Returns them all,
 * written now or before.
 */
export async function recordEvents(scope: Scope, events: readonly EventToRecord[]): Promise<RecordedEvent[]> {
  if (events.length === 0) return [];
  const now = new Date();
  const recorded: RecordedEvent[] = events.map((e, i) => ({
    id: e.idempotencyKey ? eventIdFor(e.idempotencyKey) : newId(ID_PREFIX.event),
    accountId: scope.accountId,
    sandbox: scope.sandbox,
    event: e.event,
    payload: e.payload,
    // A millisecond apart, in order: readers order events by (timestamp, id), and ids are random.
    timestamp: e.at ?? new Date(now.getTime() + i),
  }));
  const active = [...dispatchers];
  // Lookups of one scope at once share one endpoints read (the dispatcher coalesces them).
  const recipients = await Promise.all(recorded.map((r) => Promise.all(active.map((d) => d.recipientsOf(r).catch(() => null)))));
  const nobody = recipients.map((rs) => active.length > 0 && rs.every((r) => r !== null && r.length === 0));
  const skipped = new Set<number>();
  try {
    // By the driver (every write records an event: a mongoose document costs twice the CPU), with
    // the schema's defaults written out; undefined payload fields are left out, as mongoose did.
    const docs = recorded.map((r, i) => ({
      _id: r.id,
      account_id: scope.accountId,
      sandbox: scope.sandbox,
      event: r.event,
      payload: r.payload,
      timestamp: r.timestamp,
      dispatched: nobody[i],
      dispatched_at: nobody[i] ? new Date() : null,
    }));
    // One event (most changes): a plain insert, without the driver's bulk-write machinery.
    if (docs.length === 1) await Event.collection.insertOne(docs[0] as never, { ignoreUndefined: true });
    else await Event.collection.insertMany(docs as never[], { ordered: false, ignoreUndefined: true });
  } catch (err) {
    // Only keyed events may already be there (same key, same event: written once, notified once).
    const reported = (err as { writeErrors?: WriteFailure[] | WriteFailure }).writeErrors;
    const failures = reported === undefined ? (events.length === 1 ? [{ index: 0, code: (err as WriteFailure).code, errmsg: (err as Error).message }] : []) : Array.isArray(reported) ? reported : [reported];
    const keyedDuplicate = (f: WriteFailure) => !!events[f.index]?.idempotencyKey && isDuplicateKey({ code: f.code, message: f.errmsg });
    if (failures.length === 0 || !failures.every(keyedDuplicate)) throw err;
    for (const f of failures) skipped.add(f.index);
  }
  recorded.forEach((r, i) => {
    if (nobody[i] || skipped.has(i)) return;
    active.forEach((d, k) => {
      Promise.resolve()
        .then(() => d.dispatch(r, recipients[i][k]))
        .catch(() => undefined);
    });
  });
  return recorded;
}
