import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';

export const TRANSACTION_SOURCES = ['manual_entry', 'blockchain'] as const;
export type TransactionSource = (typeof TRANSACTION_SOURCES)[number];

const allocationSchema = new Schema(
  {
    _id: { type: String, required: true },
    invoice_id: { type: String, required: true },
    /** USD, two decimals. */
    amount_applied: { type: String, required: true },
    pays_in_full: { type: Boolean, default: false },
    created_at: { type: Date, required: true },
    /** USD given back as credit since (the invoice's lines were removed below what it was paid); `amount_applied` is what stays applied. */
    released_amount: { type: String, default: undefined },
  },
  { versionKey: false },
);

const cryptoTransactionSchema = new Schema(
  {
    ...scopedFields,
    currency: { type: String, enum: ['BTC', 'ETH'], required: true },
    /** Coin units, exactly as given (precision preserved). */
    amount: { type: String, required: true },
    transaction_id: { type: String, required: true },
    transaction_source: { type: String, enum: TRANSACTION_SOURCES, required: true },
    timestamp: { type: Date, required: true },
    from_address_id: { type: String, default: null },
    from_address: { type: String, default: null },
    to_address_id: { type: String, required: true },
    to_address: { type: String, required: true },
    /** Wallet of the receiving address and its owner: who the payment is for. */
    wallet_id: { type: String, required: true },
    customer_id: { type: String, default: null },
    /** (scope, currency, transaction_id, canonical to_address): one record per payment output. */
    dedupe_key: { type: String, required: true },
    /** USD value at `timestamp` (two decimals), set once priced. */
    usd_value: { type: String, default: null },
    usd_price: { type: String, default: null },
    allocations: { type: [allocationSchema], default: [] },
    /** USD not applied to any invoice (credit), set when automatic allocation finished. */
    unallocated_amount: { type: String, default: null },
    allocated_at: { type: Date, default: null },
    /**
     * Written true with the transaction, false by its allocation's finish: the transaction is its
     * own start intent for the allocation (temporal/clients/allocation.ts). Absent on transactions
     * from earlier versions (their intents were workflow_starts documents).
     */
    allocation_due: { type: Boolean, default: undefined },
    payment_claim_id: { type: String, default: null },
  },
  { timestamps, versionKey: false },
);
cryptoTransactionSchema.index({ dedupe_key: 1 }, { unique: true });
cryptoTransactionSchema.index({ account_id: 1, sandbox: 1, timestamp: -1, _id: -1 });
cryptoTransactionSchema.index({ to_address_id: 1 });
// The allocation sweeper's `{ allocation_due: true }`.
cryptoTransactionSchema.index({ allocation_due: 1 });

export type CryptoTransactionDoc = InferSchemaType<typeof cryptoTransactionSchema> & {
  _id: string;
  created_at: Date;
  updated_at: Date;
  currency: 'BTC' | 'ETH';
  transaction_source: TransactionSource;
};
export type TransactionAllocationDoc = InferSchemaType<typeof allocationSchema> & { _id: string };
export const CryptoTransaction = model('CryptoTransaction', cryptoTransactionSchema, 'crypto_transactions');

/**
 * One slot per (invoice, n-th crypto allocation): `_id` = `<invoice id>#<n>`. FerretDB v1
 * does not make a conditional findOneAndUpdate atomic under concurrency (two writers can both
 * match and one update is lost), but an insert on `_id` is: whoever inserts slot n is the only
 * writer of the invoice's n-th allocation. Also kept as the ledger of what was applied.
 */
const allocationSlotSchema = new Schema(
  {
    _id: { type: String, required: true },
    allocation_id: { type: String, required: true },
    transaction_id: { type: String, required: true },
    invoice_id: { type: String, required: true },
    amount_applied: { type: String, required: true },
    pays_in_full: { type: Boolean, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
// The slots a transaction took: its allocation's replay finds the invoices an interrupted attempt wrote (services/crypto/allocation.ts).
allocationSlotSchema.index({ transaction_id: 1 });
export type AllocationSlotDoc = InferSchemaType<typeof allocationSlotSchema> & { _id: string };
export const AllocationSlot = model('AllocationSlot', allocationSlotSchema, 'allocation_slots');

/**
 * A recorded transaction whose amount the chain contradicts: a manual entry or an approved claim
 * that the watcher then found on chain with another amount. `_id` is the transaction's id.
 * Its own document, inserted once, rather than a field of the transaction: the transaction is
 * written by its allocation, and FerretDB v1 writes an update back as the whole document it read,
 * so a flag set on it at the same moment could undo the allocation's finish (or be undone).
 */
const amountMismatchSchema = new Schema(
  {
    ...scopedFields,
    currency: { type: String, enum: ['BTC', 'ETH'], required: true },
    /** The canonical hash both records share. */
    transaction_id: { type: String, required: true },
    /** What the transaction was recorded with (and allocated from). */
    recorded_amount: { type: String, required: true },
    /** What the chain paid to the address. */
    chain_amount: { type: String, required: true },
    detected_at: { type: Date, required: true },
  },
  { versionKey: false },
);
amountMismatchSchema.index({ account_id: 1, sandbox: 1, detected_at: -1 });
export type AmountMismatchDoc = InferSchemaType<typeof amountMismatchSchema> & { _id: string };
export const AmountMismatch = model('TransactionAmountMismatch', amountMismatchSchema, 'transaction_amount_mismatches');
