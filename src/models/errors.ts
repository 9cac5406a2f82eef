/**
 * True for a unique-index violation. MongoDB (and FerretDB on inserts) answer code 11000;
 * FerretDB v1 on SQLite answers an update that breaks a unique index with InternalError
 * carrying SQLite's "UNIQUE constraint failed".
 */
export function isDuplicateKey(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown };
  return e.code === 11000 || (typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed'));
}
