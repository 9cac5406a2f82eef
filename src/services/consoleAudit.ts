/**
 * The console's money-moving actions and their audit trail: approve and reject a payment claim
 * through the same services as the API (same rules, errors, events and webhooks), each attempt
 * the service answered recorded in `console_audit_entries` with who, from where and the outcome.
 * A claim not found in the scope (404) is not recorded: nothing of the account was touched.
 */
import { ConsoleAuditEntry, ConsoleAuditEntryDoc, ConsoleAuditOutcome } from '../models/consoleAuditEntry';
import { Scope, scopeFilter } from '../models/scope';
import { ApiError } from '../lib/errors';
import type { Dependencies } from '../dependencies';
import { approvePaymentClaim, rejectPaymentClaim } from './paymentClaims';

/** Who acts: the session's user, in its scope, from the client address the app resolved. */
export interface ConsoleActor {
  scope: Scope;
  userId: number;
  email: string | null;
  clientAddress: string;
}

export type ClaimDecision = { action: 'approve' } | { action: 'reject'; reason?: string };

/** Entries shown on the claims page, newest first. */
export const RECENT_AUDIT_ENTRIES = 20;

async function record(actor: ConsoleActor, d: ClaimDecision, claimId: string, outcome: ConsoleAuditOutcome, detail: string | null) {
  await ConsoleAuditEntry.create({
    ...scopeFilter(actor.scope),
    user_id: actor.userId,
    user_email: actor.email,
    action: d.action === 'approve' ? 'payment_claim.approve' : 'payment_claim.reject',
    object_type: 'payment_claim',
    object_id: claimId,
    reason: d.action === 'reject' && d.reason?.trim() ? d.reason.trim() : null,
    outcome,
    detail,
    client_address: actor.clientAddress,
    at: new Date(),
  });
}

/** Approves or rejects a claim as the API does; records the outcome, a refusal included (then rethrown). */
export async function decideClaim(deps: Dependencies, actor: ConsoleActor, claimId: string, d: ClaimDecision) {
  let claim;
  try {
    claim = d.action === 'approve' ? await approvePaymentClaim(deps, actor.scope, actor.userId, claimId) : await rejectPaymentClaim(actor.scope, actor.userId, claimId, d.reason);
  } catch (err) {
    if (err instanceof ApiError && err.status !== 404 && err.status < 500) await record(actor, d, claimId, 'refused', err.message);
    throw err;
  }
  await record(actor, d, claimId, d.action === 'approve' ? 'approved' : 'rejected', null);
  return claim;
}

/** The scope's most recent console actions, newest first. */
export async function recentAuditEntries(scope: Scope, limit = RECENT_AUDIT_ENTRIES): Promise<ConsoleAuditEntryDoc[]> {
  return ConsoleAuditEntry.find(scopeFilter(scope)).sort({ at: -1, _id: -1 }).limit(limit).lean<ConsoleAuditEntryDoc[]>();
}

/** The scope's console actions on these objects, oldest first (for the rows of the claims queue). */
export async function auditEntriesOf(scope: Scope, objectIds: string[]): Promise<ConsoleAuditEntryDoc[]> {
  if (!objectIds.length) return [];
  return ConsoleAuditEntry.find({ ...scopeFilter(scope), object_id: { $in: objectIds } }).sort({ at: 1, _id: 1 }).lean<ConsoleAuditEntryDoc[]>();
}
