/**
 * True for a unique-index violation. MongoDB (and FerretDB on inserts) answer code 11000;
 * FerretDB v1 answers an update that breaks a unique index with InternalError carrying the
 * backend's message: SQLite's "UNIQUE constraint failed", PostgreSQL's SQLSTATE 23505
 * ("duplicate key value violates unique constraint").
 */
export function isDuplicateKey(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown };
  if (e.code === 11000) return true;
  if (typeof e.message !== 'string') return false;
  return e.message.includes('UNIQUE constraint failed') || e.message.includes('(SQLSTATE 23505)');
}

/**
 * Runs an upsert, once more if it failed as a duplicate: two upserts of one new `_id` at once on
 * FerretDB both try the insert, and the second fails; run again, it is an update.
 */
export async function upsertAgainOnDuplicate<T>(upsert: () => Promise<T>): Promise<T> {
  try {
    return await upsert();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return upsert();
  }
}

/** Driver errors that mean "the server could not be reached", whatever the operation. */
const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError', // no server answered within serverSelectionTimeoutMS
  'MongooseServerSelectionError', // mongoose's wrapper of the same (initial connect)
  'MongoNetworkError', // connection refused, reset or closed under an operation
  'MongoNetworkTimeoutError',
  'MongoPoolClearedError', // the pool was cleared after a network error (an operation waiting on it)
  'PoolClearedOnNetworkError',
  'MongoPoolClosedError',
  'MongoWaitQueueTimeoutError',
  'MongoNotConnectedError', // the client is not connected (yet, or any more)
  'MongoTopologyClosedError', // the client was closed (process stopping)
  'MongoClientClosedError',
  'MongoServerClosedError',
  'MongoOperationTimeoutError',
]);

/**
 * True when an operation failed because the database could not be reached (down, restarting,
 * unreachable), as opposed to a failure of the operation itself. By class name along the
 * prototype chain (so subclasses such as PoolClearedOnNetworkError count), plus mongoose's own
 * "Operation `x.y()` buffering timed out" (a command issued while disconnected waited
 * bufferTimeoutMS). The API answers these with 503 `service_unavailable`.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  for (let proto = Object.getPrototypeOf(err); proto && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    if (UNAVAILABLE_NAMES.has(proto.constructor?.name)) return true;
  }
  const e = err as { name?: unknown; message?: unknown };
  if (typeof e.name === 'string' && UNAVAILABLE_NAMES.has(e.name)) return true;
  return e.name === 'MongooseError' && typeof e.message === 'string' && /buffering timed out after \d+ms/.test(e.message);
}
