/**
 * Safe retries (DECISIONS.md): the first response to a key is replayed for 24 hours;
 * the same key with another route or body is refused; a key still in flight is a 409.
 */
import { createHash } from 'node:crypto';
import { IdempotencyKey, IdempotencyKeyDoc } from '../models/idempotencyKey';
import { isDuplicateKey } from '../models/errors';
import { Scope } from '../models/scope';
import { ApiError } from '../lib/errors';

const TTL_MS = 24 * 3600 * 1000;
/** A key still `processing` after this long belongs to a request that died: the next one takes it over. */
const STALE_PROCESSING_MS = 60 * 1000;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export type Reservation = { kind: 'new'; id: string } | { kind: 'replay'; status: number; body: unknown };

export async function reserveKey(scope: Scope, key: string, method: string, path: string, body: unknown): Promise<Reservation> {
  const id = sha256(JSON.stringify([scope.accountId, scope.sandbox, key]));
  const requestHash = sha256(JSON.stringify([method, path, body ?? null]));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await IdempotencyKey.create({ _id: id, request_hash: requestHash, state: 'processing', created_at: new Date() });
      return { kind: 'new', id };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const existing = await IdempotencyKey.findById(id).lean<IdempotencyKeyDoc>();
    if (!existing) continue;
    const age = Date.now() - new Date(existing.created_at).getTime();
    if (age > TTL_MS || (existing.state === 'processing' && age > STALE_PROCESSING_MS)) {
      // Expired but not yet removed by the TTL monitor (FerretDB has none): start afresh.
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

/** Keeps a final response; a 5xx is not kept so the client may retry. */
export async function completeKey(id: string, status: number, body: unknown): Promise<void> {
  if (status >= 500) {
    // The database may be what failed; retry the release a few times so the key is free again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await IdempotencyKey.deleteOne({ _id: id });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    return;
  }
  await IdempotencyKey.updateOne({ _id: id }, { $set: { state: 'done', status, body: body ?? null } });
}
