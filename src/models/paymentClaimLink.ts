import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

export const LINK_STATUSES = ['active', 'used', 'expired'] as const;
export type LinkStatus = (typeof LINK_STATUSES)[number];

const paymentClaimLinkSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    customer_id: { type: String, required: true },
    status: { type: String, enum: LINK_STATUSES, required: true },
    /** 43 URL-safe characters (32 random bytes); the public handle, never the id. */
    secret: { type: String, required: true },
    expires_at: { type: Date, required: true },
    max_uses: { type: Number, required: true },
    use_count: { type: Number, default: 0 },
    used_at: { type: Date, default: null },
    metadata: { type: String, default: null },
    price_id: { type: String, default: null },
    crypto_payment_claim_id: { type: String, default: null },
    /** The hold every writer takes (services/writes/heldWrites.ts): submissions and the expiry write one at a time. */
    write_version: { type: Number, default: 0 },
  },
  { timestamps, versionKey: false },
);
paymentClaimLinkSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(paymentClaimLinkSchema);
// The links of a customer (customer delete).
paymentClaimLinkSchema.index({ customer_id: 1 });

export type PaymentClaimLinkDoc = InferSchemaType<typeof paymentClaimLinkSchema> & { _id: string; created_at: Date; updated_at: Date; status: LinkStatus };
export const PaymentClaimLink = model('PaymentClaimLink', paymentClaimLinkSchema, 'payment_claim_links');

/**
 * Secret -> link lookup keyed by `_id` = SHA-256(secret), so the public routes read by `_id`
 * alone (the only filter FerretDB v1 pushes down to SQLite).
 */
const linkSecretSchema = new Schema({ _id: { type: String, required: true }, link_id: { type: String, required: true } }, { versionKey: false });
export const PaymentClaimLinkSecret = model('PaymentClaimLinkSecret', linkSecretSchema, 'payment_claim_link_secrets');

/**
 * One document per use of a link, `_id` = `<link id>#<n>`: inserting it is the atomic step that
 * takes use n (FerretDB v1 does not make a conditional findOneAndUpdate atomic under
 * concurrency), so concurrent submissions can never exceed `max_uses`.
 */
const linkUseSchema = new Schema(
  { _id: { type: String, required: true }, link_id: { type: String, required: true }, created_at: { type: Date, required: true } },
  { versionKey: false },
);
export const PaymentClaimLinkUse = model('PaymentClaimLinkUse', linkUseSchema, 'payment_claim_link_uses');
