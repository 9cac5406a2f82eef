/**
 * Writes the event of every change. Every service that changes a resource calls
 * `recordEvent` after its write; nothing else writes to the events collection.
 */
import { Event } from '../models/event';
import { Scope } from '../models/scope';
import { EventName } from '../lib/eventNames';
import { newId, derivedId, ID_PREFIX } from '../lib/ids';
import { isDuplicateKey } from '../models/errors';

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

type Listener = (event: RecordedEvent) => void | Promise<void>;
const listeners: Listener[] = [];

/** Lets webhook dispatch start deliveries right away; a sweeper covers listener failures. */
export function onEventRecorded(listener: Listener): () => void {
  listeners.push(listener);
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
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
  try {
    await Event.create({ _id: id, account_id: scope.accountId, sandbox: scope.sandbox, event, payload, timestamp: at });
  } catch (err) {
    if (opts.idempotencyKey && isDuplicateKey(err)) return recorded;
    throw err;
  }
  for (const listener of listeners) {
    Promise.resolve()
      .then(() => listener(recorded))
      .catch(() => undefined);
  }
  return recorded;
}
