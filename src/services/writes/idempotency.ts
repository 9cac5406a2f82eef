/**
 * Safe retries (docs/adr/0606-idempotency-keys.md): the first response to a key is replayed for 24 hours;
 * the same key with another route or body is refused; a key still in flight is a 409.
 *
 * Each reservation carries an owner (a random token of the request that made it): only that
 * request can complete or release it, so a request whose key was taken over cannot overwrite
 * or free its successor's. A running request refreshes its reservation (`heartbeat_at`), so a
 * key is taken over only when its request has stopped answering, never while it still runs.
 */
import { createHash } from 'node:crypto';
import { IdempotencyKey, IdempotencyKeyDoc } from '../../models/idempotencyKey';
import { isDuplicateKey } from '../../models/errors';
import { Scope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { randomHex } from '../../lib/ids';

const TTL_MS = 24 * 3600 * 1000;
/** A key still `processing` without a heartbeat for this long belongs to a request that died: the next one takes it over. */
const STALE_PROCESSING_MS = 60 * 1000;
/** How often a running request refreshes its reservation (well inside STALE_PROCESSING_MS). */
const HEARTBEAT_MS = 15 * 1000;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The stored record; `owner` and `heartbeat_at` are written with the driver, outside the model's schema. */
type KeyRecord = IdempotencyKeyDoc & { owner?: string; heartbeat_at?: Date };

/** A reservation this request holds: pass it to {@link completeKey}. */
export interface HeldKey {
  id: string;
  /** The request's hash (method, path, body), which a retry with the key must match. */
  requestHash: string;
  owner: string;
  /** Stops the heartbeat; resolves once a beat in flight has landed (completeKey waits for it). */
  stop: () => Promise<void>;
}

export type Reservation = ({ kind: 'new' } & HeldKey) | { kind: 'replay'; status: number; body: unknown };

/** The filter of one owner's reservation, for the driver (the model's schema would drop `owner`). */
const ownedBy = (id: string, owner: string) => ({ _id: id, owner }) as never;

/**
 * Refreshes `heartbeat_at` while the request runs; best effort (a missed beat only risks a takeover).
 * Stopping waits for a beat in flight: FerretDB v1 writes an update back as the whole document it
 * read, so a beat landing after the outcome's write would put the key back to `processing`.
 */
function keepAlive(id: string, owner: string, everyMs: number): () => Promise<void> {
  let beat: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    beat = beat.then(() => IdempotencyKey.collection.updateOne(ownedBy(id, owner), { $set: { heartbeat_at: new Date() } })).then(
      () => undefined,
      () => undefined,
    );
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    return beat;
  };
}

export async function reserveKey(
  scope: Scope,
  key: string,
  method: string,
  path: string,
  body: unknown,
  opts: { heartbeatMs?: number } = {},
): Promise<Reservation> {
  const id = sha256(JSON.stringify([scope.accountId, scope.sandbox, key]));
  const requestHash = sha256(JSON.stringify([method, path, body ?? null]));
  const owner = randomHex(16);
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = new Date();
    try {
      // The driver's insert: the model's schema would drop `owner` and `heartbeat_at`.
      await IdempotencyKey.collection.insertOne({ _id: id, request_hash: requestHash, state: 'processing', status: null, body: null, created_at: now, owner, heartbeat_at: now } as never);
      return { kind: 'new', id, requestHash, owner, stop: keepAlive(id, owner, opts.heartbeatMs ?? HEARTBEAT_MS) };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const existing = await IdempotencyKey.findById(id).lean<KeyRecord>();
    if (!existing) continue;
    const age = now.getTime() - new Date(existing.created_at).getTime();
    const silent = now.getTime() - new Date(existing.heartbeat_at ?? existing.created_at).getTime();
    if (age > TTL_MS || (existing.state === 'processing' && silent > STALE_PROCESSING_MS)) {
      // Expired but not yet removed by the TTL monitor (FerretDB has none), or its request died: start afresh.
      await IdempotencyKey.deleteOne({ _id: id, created_at: existing.created_at });
      continue;
    }
    if (existing.request_hash !== requestHash) {
      throw ApiError.invalid('Idempotency-Key was already used with another request', 'Idempotency-Key');
    }
    if (existing.state === 'processing') {
      throw ApiError.conflict('idempotency_conflict', 'A request with this Idempotency-Key is still being processed', 'Idempotency-Key');
    }
    return { kind: 'replay', status: existing.status!, body: existing.body };
  }
  throw ApiError.conflict('idempotency_conflict', 'A request with this Idempotency-Key is still being processed', 'Idempotency-Key');
}

/** Whether a response is released (not kept): a 5xx, or a 409 (a conflict that clears). */
const released = (status: number) => status >= 500 || status === 409;

/** One write of a request's outcome: the key released, or the response kept. Owner-checked. */
async function writeOutcome(held: HeldKey, status: number, body: unknown): Promise<void> {
  const mine = ownedBy(held.id, held.owner);
  if (released(status)) await IdempotencyKey.collection.deleteOne(mine);
  else await IdempotencyKey.collection.updateOne(mine, { $set: { state: 'done', status, body: body ?? null } });
}

/**
 * Keeps a final response. A 5xx or a 409 (a conflict that clears: allocation in progress, an
 * invoice that changed) is not kept, so the client's retry runs again. Only the reservation's
 * owner writes: a request whose key was taken over changes nothing.
 */
export async function completeKey(held: HeldKey, status: number, body: unknown): Promise<void> {
  await held.stop();
  if (released(status)) {
    // The database may be what failed; retry the release a few times so the key is free again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await writeOutcome(held, status, body);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    return;
  }
  await writeOutcome(held, status, body);
}

/** How long completeKeyLater keeps trying (an outage longer than this leaves the key to go stale). */
const LATER_RETRY_FOR_MS = 10 * 60 * 1000;

/**
 * completeKey when the database is unreachable right now: the response does not wait on it again
 * (each attempt can take DB_UNAVAILABLE_TIMEOUT_MS). The same owner-checked write is retried in
 * the background, from 0.5 s up to every 5 s, until it lands or LATER_RETRY_FOR_MS pass. Until
 * then the key reads `processing` (a retry with it gets 409 `idempotency_conflict`); if it never
 * lands, the key is taken over STALE_PROCESSING_MS after its last heartbeat, as for a dead request.
 */
export function completeKeyLater(held: HeldKey, status: number, body: unknown): void {
  const stopped = held.stop();
  const giveUpAt = Date.now() + LATER_RETRY_FOR_MS;
  const attempt = (delayMs: number) => {
    setTimeout(() => {
      stopped.then(() => writeOutcome(held, status, body)).catch(() => {
        if (Date.now() < giveUpAt) attempt(Math.min(delayMs * 2, 5_000));
      });
    }, delayMs).unref();
  };
  attempt(500);
}
