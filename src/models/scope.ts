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

/** Fields every scoped document carries. */
export const scopedFields = {
  _id: { type: String, required: true },
  account_id: { type: String, required: true },
  sandbox: { type: String, default: null },
} as const;

export const timestamps = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;
