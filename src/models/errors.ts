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
