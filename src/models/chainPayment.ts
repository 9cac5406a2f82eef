import { Schema, model, InferSchemaType } from 'mongoose';
import { timestamps } from './scope';

/**
 * A payment output seen on chain to a watched address, before and after it is final.
 * `_id` = `<currency>:<tx hash>:<output index>`, so rescanning a block writes the same record.
 * It becomes crypto transactions (one per scope holding the address) once it has the
 * confirmation threshold; a `dropped` one (no longer in the best chain) is never recorded
 * unless it comes back in a block.
 */
const chainPaymentSchema = new Schema(
  {
    _id: { type: String, required: true },
    currency: { type: String, enum: ['BTC', 'ETH'], required: true },
    tx_hash: { type: String, required: true },
    output_index: { type: Number, required: true },
    to_address: { type: String, required: true },
    /** Canonical form, as crypto_addresses.address_key. */
    address_key: { type: String, required: true },
    amount: { type: String, required: true },
    from_address: { type: String, default: null },
    block_height: { type: Number, required: true },
    block_hash: { type: String, required: true },
    timestamp: { type: Date, required: true },
    status: { type: String, enum: ['pending', 'dropped', 'recorded'], required: true },
    recorded_at: { type: Date, default: null },
  },
  { timestamps, versionKey: false },
);
chainPaymentSchema.index({ currency: 1, status: 1 });
// The outputs of one transaction to one address (currency + tx_hash + address_key).
chainPaymentSchema.index({ tx_hash: 1 });

export type ChainPaymentDoc = InferSchemaType<typeof chainPaymentSchema> & { _id: string; currency: 'BTC' | 'ETH'; status: 'pending' | 'dropped' | 'recorded' };
export const ChainPaymentRecord = model('ChainPayment', chainPaymentSchema, 'chain_payments');

/** The last block a currency's watcher scanned (also kept in the workflow; this copy survives a new workflow run). */
const chainCursorSchema = new Schema(
  {
    _id: { type: String, required: true },
    height: { type: Number, required: true },
    hash: { type: String, required: true },
  },
  { timestamps, versionKey: false },
);
export type ChainCursorDoc = InferSchemaType<typeof chainCursorSchema> & { _id: string };
export const ChainCursor = model('ChainCursor', chainCursorSchema, 'chain_cursors');

/**
 * Changes whenever an address of the currency is added or removed (`_id` = currency, `version` a
 * fresh random value each time), so a watcher re-reads its set of watched addresses only when
 * the set changed. Two concurrent changes may each overwrite the other's value: either way the
 * value differs from the one the watcher read before.
 */
const watchedAddressesVersionSchema = new Schema(
  {
    _id: { type: String, required: true },
    version: { type: String, required: true },
  },
  { timestamps, versionKey: false },
);
export type WatchedAddressesVersionDoc = InferSchemaType<typeof watchedAddressesVersionSchema> & { _id: string };
export const WatchedAddressesVersion = model('WatchedAddressesVersion', watchedAddressesVersionSchema, 'watched_addresses_versions');
