/**
 * Every merchant resource belongs to one account and one scope: production (sandbox null)
 * or one named sandbox. All reads and writes filter on both, so nothing crosses accounts.
 */
export interface Scope {
  accountId: string;
  sandbox: string | null;
}

export function scopeFilter(scope: Scope): { account_id: string; sandbox: string | null } {
  return { account_id: scope.accountId, sandbox: scope.sandbox };
}

/** One string per account and scope (`<account>|<sandbox or empty>`): in-process keys, and listed documents' stored `list_scope`. */
export function scopeKey(scope: Scope): string {
  return `${scope.accountId}|${scope.sandbox ?? ''}`;
}

/** The scope a stored document belongs to. */
export function scopeOfDoc(doc: { account_id: string; sandbox?: string | null }): Scope {
  return { accountId: doc.account_id, sandbox: doc.sandbox ?? null };
}

/** Fields every scoped document carries. */
export const scopedFields = {
  _id: { type: String, required: true },
  account_id: { type: String, required: true },
  sandbox: { type: String, default: null },
} as const;

export const timestamps = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

/** A document's scope check, done in code (see findInScope). */
export function inScope(doc: { account_id?: string; sandbox?: string | null } | null | undefined, scope: Scope): boolean {
  return !!doc && doc.account_id === scope.accountId && (doc.sandbox ?? null) === scope.sandbox;
}

/**
 * Loads one document by id and checks its scope in code: one indexed lookup by `_id` on every
 * backend (FerretDB never pushes the production scope's `sandbox: null` down). A document of
 * another account or scope reads as missing (404). Through the driver: the same plain document
 * a lean mongoose query gives (no model here hides fields or has query hooks), for about half of
 * its CPU on every by-id read of the API.
 */
export async function findInScope<T>(model: { collection: { findOne(filter: object): Promise<unknown> } }, scope: Scope, id: string): Promise<T | null> {
  if (typeof id !== 'string' || !id) return null;
  const doc = (await model.collection.findOne({ _id: id })) as (T & { account_id?: string; sandbox?: string | null }) | null;
  return inScope(doc, scope) ? doc : null;
}
