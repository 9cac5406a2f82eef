import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';

export const CLAIM_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ClaimStatus = (typeof CLAIM_STATUSES)[number];

const paymentClaimSchema = new Schema(
  {
    ...scopedFields,
    status: { type: String, enum: CLAIM_STATUSES, required: true },
    customer_id: { type: String, required: true },
    payment_claim_link_id: { type: String, required: true },
    currency: { type: String, enum: ['BTC', 'ETH'], required: true },
    amount: { type: String, required: true },
    transaction_id: { type: String, required: true },
    to_address_id: { type: String, required: true },
    to_address: { type: String, required: true },
    rejection_reason: { type: String, default: null },
    approved_at: { type: Date, default: null },
    approved_by_id: { type: Number, default: null },
    crypto_transaction_id: { type: String, default: null },
  },
  { timestamps, versionKey: false },
);
paymentClaimSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
paymentClaimSchema.index({ to_address_id: 1 });

export type PaymentClaimDoc = InferSchemaType<typeof paymentClaimSchema> & { _id: string; created_at: Date; updated_at: Date; status: ClaimStatus; currency: 'BTC' | 'ETH' };
export const PaymentClaim = model('PaymentClaim', paymentClaimSchema, 'payment_claims');

/** `_id` = claim id: inserting it is the atomic pending -> decided step (one approval or rejection wins). */
const claimDecisionSchema = new Schema(
  { _id: { type: String, required: true }, decision: { type: String, required: true }, created_at: { type: Date, required: true } },
  { versionKey: false },
);
export const PaymentClaimDecision = model('PaymentClaimDecision', claimDecisionSchema, 'payment_claim_decisions');
