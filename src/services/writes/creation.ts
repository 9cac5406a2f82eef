/**
 * A create under an Idempotency-Key. The key is held by one request at a time; when that request
 * dies after its write but before its answer (a killed API process), a retry takes the key over
 * and runs again. The new resource's id derives from the key (and the request's hash), so that
 * retry finds what the first attempt wrote and finishes it (its events, keyed by the resource, and
 * its workflow, planned before the write) instead of writing a second resource or refusing a
 * duplicate: the client gets the one resource it asked for.
 */
import { ID_PREFIX, derivedId, newId } from '../../lib/ids';
import { findInScope, Scope } from '../../models/scope';

/** What a create's route passes on from the request: the Idempotency-Key it holds, if any. */
export interface CreateOptions {
  idempotencyKeyId?: string;
}

/** The id of the resource a create writes: derived from the Idempotency-Key when there is one. */
export function createdId(prefix: (typeof ID_PREFIX)[keyof typeof ID_PREFIX], opts: CreateOptions = {}): string {
  return opts.idempotencyKeyId ? derivedId(prefix, `idempotency:${opts.idempotencyKeyId}`) : newId(prefix);
}

/** What an earlier attempt of this create (under the same key) wrote, if it got that far. */
export async function earlierAttempt<T>(model: Parameters<typeof findInScope>[0], scope: Scope, id: string, opts: CreateOptions = {}): Promise<T | null> {
  return opts.idempotencyKeyId ? findInScope<T>(model, scope, id) : null;
}

