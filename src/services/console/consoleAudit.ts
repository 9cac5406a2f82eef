/**
 * The console's money-moving actions and their audit trail: approve and reject a payment claim,
 * mark an invoice paid and void it, each through the same services as the API (same rules,
 * errors, events and webhooks), each attempt the service answered recorded in
 * `console_audit_entries` with who, from where and the outcome. An object not found in the scope
 * (404) is not recorded: nothing of the account was touched.
 */
import { ConsoleAuditAction, ConsoleAuditEntry, ConsoleAuditEntryDoc, ConsoleAuditOutcome } from '../../models/consoleAuditEntry';
import { Scope, scopeFilter } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import type { Dependencies } from '../../dependencies';
import { approvePaymentClaim, rejectPaymentClaim } from '../crypto/paymentClaims';
import { findInvoice } from '../billing/invoices';
import { updateInvoice } from '../billing/invoiceChanges';
import { rotateInvoiceLinks } from '../billing/invoiceDocuments';

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

interface AuditedAction {
  action: ConsoleAuditAction;
  objectType: string;
  objectId: string;
  reason?: string | null;
}

async function record(actor: ConsoleActor, what: AuditedAction, outcome: ConsoleAuditOutcome, detail: string | null) {
  await ConsoleAuditEntry.create({
    ...scopeFilter(actor.scope),
    user_id: actor.userId,
    user_email: actor.email,
    action: what.action,
    object_type: what.objectType,
    object_id: what.objectId,
    reason: what.reason?.trim() ? what.reason.trim() : null,
    outcome,
    detail,
    client_address: actor.clientAddress,
    at: new Date(),
  });
}

/** Runs `act` and records its outcome, a refusal (a 4xx but 404) included, then rethrown. */
async function audited<T>(actor: ConsoleActor, what: AuditedAction, done: ConsoleAuditOutcome, act: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await act();
  } catch (err) {
    if (err instanceof ApiError && err.status !== 404 && err.status < 500) await record(actor, what, 'refused', err.message);
    throw err;
  }
  await record(actor, what, done, null);
  return result;
}

/** Approves or rejects a claim as the API does; records the outcome, a refusal included (then rethrown). */
export async function decideClaim(deps: Dependencies, actor: ConsoleActor, claimId: string, d: ClaimDecision) {
  const what: AuditedAction = { action: d.action === 'approve' ? 'payment_claim.approve' : 'payment_claim.reject', objectType: 'payment_claim', objectId: claimId, reason: d.action === 'reject' ? d.reason : null };
  return audited(actor, what, d.action === 'approve' ? 'approved' : 'rejected', () =>
    d.action === 'approve' ? approvePaymentClaim(deps, actor.scope, actor.userId, claimId) : rejectPaymentClaim(actor.scope, actor.userId, claimId, d.reason),
  );
}

export type InvoiceAction = 'mark_paid' | 'void';

/**
 * Why the console does not offer an action on an invoice in this status (null: it does). The
 * API's PATCH takes paid -> paid and canceled -> canceled (another `invoice.updated` each) and
 * paid -> canceled; the console acts on open invoices only, except that marking a voided invoice
 * paid goes to the API, whose refusal ("A canceled invoice cannot change status") is the message.
 */
export function invoiceActionRefusal(status: string, action: InvoiceAction): string | null {
  if (action === 'mark_paid') return status === 'paid' ? 'The invoice is already paid' : null;
  if (status === 'canceled') return 'The invoice is already void';
  return status === 'paid' ? 'A paid invoice cannot be voided from the console' : null;
}

/**
 * Marks an invoice paid or voids it (status `canceled`) through the API's PATCH service
 * (`updateInvoice`: its rules and errors, `invoice.updated` and `invoice.paid`, webhooks, the
 * due-date workflow ended); audited like a claim decision.
 */
export async function actOnInvoice(deps: Dependencies, actor: ConsoleActor, invoiceId: string, action: InvoiceAction) {
  const invoice = await findInvoice(actor.scope, invoiceId);
  const what: AuditedAction = { action: action === 'mark_paid' ? 'invoice.mark_paid' : 'invoice.void', objectType: 'invoice', objectId: invoice._id };
  return audited(actor, what, action === 'mark_paid' ? 'paid' : 'voided', async () => {
    const refusal = invoiceActionRefusal(invoice.status, action);
    if (refusal) throw ApiError.invalid(refusal, 'status');
    return updateInvoice(deps, actor.scope, invoice._id, { status: action === 'mark_paid' ? 'paid' : 'canceled' });
  });
}

/** New hosted page and PDF links for an invoice (the old ones end); audited, though it moves no money. */
export async function rotateLinksOf(deps: Dependencies, actor: ConsoleActor, invoiceId: string) {
  const invoice = await findInvoice(actor.scope, invoiceId);
  return audited(actor, { action: 'invoice.rotate_links', objectType: 'invoice', objectId: invoice._id }, 'rotated', () => rotateInvoiceLinks(deps, actor.scope, invoice._id));
}

/** The scope's most recent console actions, newest first. */
export async function recentAuditEntries(scope: Scope, limit = RECENT_AUDIT_ENTRIES): Promise<ConsoleAuditEntryDoc[]> {
  return ConsoleAuditEntry.find(scopeFilter(scope)).sort({ at: -1, _id: -1 }).limit(limit).lean<ConsoleAuditEntryDoc[]>();
}

/** The scope's console actions on these objects, oldest first (a claim's row, an invoice's page). */
export async function auditEntriesOf(scope: Scope, objectIds: string[]): Promise<ConsoleAuditEntryDoc[]> {
  if (!objectIds.length) return [];
  // One object (an invoice's page): an equality on its indexed id, which FerretDB pushes down ($in it would not).
  const objectId = objectIds.length === 1 ? objectIds[0] : { $in: objectIds };
  return ConsoleAuditEntry.find({ ...scopeFilter(scope), object_id: objectId }).sort({ at: 1, _id: 1 }).lean<ConsoleAuditEntryDoc[]>();
}
