import { AmountMismatchDoc, CryptoTransactionDoc } from '../models/cryptoTransaction';
import { iso } from './common';

/** `mismatch`: the chain's amount when it contradicts the recorded one (services/crypto/cryptoTransactions.ts). */
export function presentCryptoTransaction(t: CryptoTransactionDoc, mismatch: AmountMismatchDoc | null = null) {
  return {
    id: t._id,
    object: 'crypto_transaction' as const,
    amount: t.amount,
    transaction_id: t.transaction_id,
    transaction_source: t.transaction_source,
    timestamp: iso(t.timestamp),
    currency: t.currency,
    from_address_id: t.from_address_id ?? null,
    from_address: t.from_address ?? null,
    to_address_id: t.to_address_id,
    to_address: t.to_address,
    /** Added: USD value at `timestamp` and what of it no invoice took (null until priced/allocated). */
    usd_value: t.usd_value ?? null,
    unallocated_amount: t.unallocated_amount ?? null,
    /** Added: set when the chain paid another amount than this transaction records (kept as recorded). */
    amount_mismatch: mismatch ? { recorded_amount: mismatch.recorded_amount, chain_amount: mismatch.chain_amount, detected_at: iso(mismatch.detected_at) } : null,
    allocations: (t.allocations ?? []).map((a) => ({
      id: a._id,
      invoice_id: a.invoice_id,
      amount_applied: a.amount_applied,
      created_at: iso(a.created_at),
    })),
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

export function allocationEventPayload(t: CryptoTransactionDoc, a: { _id: string; invoice_id: string; amount_applied: string; created_at: Date }) {
  return {
    id: a._id,
    object: 'transaction_allocation',
    crypto_transaction_id: t._id,
    invoice_id: a.invoice_id,
    amount_applied: a.amount_applied,
    created_at: iso(a.created_at),
  };
}
