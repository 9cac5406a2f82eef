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
  const at = opts.at ?? new Date();
  const id = opts.idempotencyKey ? eventIdFor(opts.idempotencyKey) : newId(ID_PREFIX.event);
  const recorded: RecordedEvent = { id, accountId: scope.accountId, sandbox: scope.sandbox, event, payload, timestamp: at };
  const active = [...dispatchers];
  const recipients = await Promise.all(active.map((d) => d.recipientsOf(recorded).catch(() => null)));
  const nobody = active.length > 0 && recipients.every((r) => r !== null && r.length === 0);
  try {
    // By the driver (every write records an event: a mongoose document costs twice the CPU), with
    // the schema's defaults written out; undefined payload fields are left out, as mongoose did.
    await Event.collection.insertOne(
      {
        _id: id,
        account_id: scope.accountId,
        sandbox: scope.sandbox,
        event,
        payload,
        timestamp: at,
        dispatched: nobody,
        dispatched_at: nobody ? new Date() : null,
      } as never,
      { ignoreUndefined: true },
    );
  } catch (err) {
    if (opts.idempotencyKey && isDuplicateKey(err)) return recorded;
    throw err;
  }
  if (nobody) return recorded;
  active.forEach((d, i) => {
    Promise.resolve()
      .then(() => d.dispatch(recorded, recipients[i]))
      .catch(() => undefined);
  });
  return recorded;
}
