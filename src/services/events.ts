/**
 * Writes the event of every change. Every service that changes a resource calls
 * `recordEvent` after its write; nothing else writes to the events collection.
 */
import { Event } from '../models/event';
import { Scope } from '../models/scope';
import { EventName } from '../lib/eventNames';
import { newId, ID_PREFIX } from '../lib/ids';

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

export async function recordEvent(scope: Scope, event: EventName, payload: EventPayload, at = new Date()): Promise<RecordedEvent> {
  const id = newId(ID_PREFIX.event);
  await Event.create({ _id: id, account_id: scope.accountId, sandbox: scope.sandbox, event, payload, timestamp: at });
  const recorded: RecordedEvent = { id, accountId: scope.accountId, sandbox: scope.sandbox, event, payload, timestamp: at };
  for (const listener of listeners) {
    Promise.resolve()
      .then(() => listener(recorded))
      .catch(() => undefined);
  }
  return recorded;
}
