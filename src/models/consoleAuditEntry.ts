import { Schema, model, InferSchemaType } from 'mongoose';

export const CONSOLE_AUDIT_OUTCOMES = ['approved', 'rejected', 'paid', 'voided', 'rotated', 'refused'] as const;
export const CONSOLE_AUDIT_ACTIONS = ['payment_claim.approve', 'payment_claim.reject', 'invoice.mark_paid', 'invoice.void', 'invoice.rotate_links'] as const;
export type ConsoleAuditAction = (typeof CONSOLE_AUDIT_ACTIONS)[number];
export type ConsoleAuditOutcome = (typeof CONSOLE_AUDIT_OUTCOMES)[number];

/**
 * One money-moving action taken in the finance console (src/services/console/consoleAudit.ts): who (user
 * id and email as of then), in which account and scope, from which client address (as the app
 * resolved it, trusted proxies applied), on what object, with what reason and outcome: `approved`,
 * `rejected`, `paid`, `voided` or `rotated` when the service did it, `refused` (with the service's message) when it did not.
 * Append-only; never shown outside its account and scope.
 */
const consoleAuditEntrySchema = new Schema(
  {
    account_id: { type: String, required: true },
    sandbox: { type: String, default: null },
    user_id: { type: Number, required: true },
    user_email: { type: String, default: null },
    action: { type: String, enum: CONSOLE_AUDIT_ACTIONS, required: true },
    object_type: { type: String, required: true },
    object_id: { type: String, required: true },
    reason: { type: String, default: null },
    outcome: { type: String, enum: CONSOLE_AUDIT_OUTCOMES, required: true },
    detail: { type: String, default: null },
    client_address: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { versionKey: false },
);
consoleAuditEntrySchema.index({ account_id: 1, sandbox: 1, at: -1 });
consoleAuditEntrySchema.index({ object_id: 1 });

export type ConsoleAuditEntryDoc = InferSchemaType<typeof consoleAuditEntrySchema> & { _id: unknown; outcome: ConsoleAuditOutcome };
export const ConsoleAuditEntry = model('ConsoleAuditEntry', consoleAuditEntrySchema, 'console_audit_entries');
