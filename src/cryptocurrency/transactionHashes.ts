/**
 * Transaction hashes, one canonical spelling per currency (pure; safe in workflows).
 *
 * The same payment must give the same key however a customer, a merchant or a node spells its
 * hash, or one payment is credited twice (a claim naming the watcher's hash without `0x`).
 * - BTC: a txid is 32 bytes shown as 64 hex digits: canonical lowercase, no prefix. A `0x`
 *   (any case) is accepted and stripped: some wallets and explorers print one.
 * - ETH: a transaction hash is 32 bytes: canonical `0x` + 64 lowercase hex. `0X` and a missing
 *   prefix are accepted.
 * Anything else is not a hash of that currency. Surrounding whitespace is trimmed.
 */
import type { CryptoCurrency } from './addresses';
import { groupBy } from '../lib/groupBy';

export type TransactionHashCheck = { ok: true; canonical: string } | { ok: false; reason: string };

const HASH_BODY = /^(?:0[xX])?([0-9a-fA-F]{64})$/;

export function canonicalTransactionHash(currency: CryptoCurrency, hash: string): TransactionHashCheck {
  const match = HASH_BODY.exec(hash.trim());
  if (!match) {
    return {
      ok: false,
      reason: currency === 'BTC' ? 'must be a BTC transaction id: 64 hexadecimal characters' : 'must be an ETH transaction hash: 0x followed by 64 hexadecimal characters',
    };
  }
  const body = match[1].toLowerCase();
  return { ok: true, canonical: currency === 'ETH' ? `0x${body}` : body };
}

/** A stored transaction as the hash audit sees it. */
export interface StoredTransactionHash {
  id: string;
  /** `<account>|<sandbox>`: dedupe is per scope. */
  scope: string;
  currency: CryptoCurrency;
  transaction_id: string;
  /** The receiving address's canonical key: dedupe is per output address. */
  address_key: string;
}

export interface TransactionHashPlan {
  /** Stored in another spelling, no twin: can be rewritten to `canonical`. */
  rewrite: { id: string; from: string; canonical: string }[];
  /** One payment recorded more than once (each group's ids, oldest spelling first as stored). */
  duplicates: { canonical: string; currency: CryptoCurrency; scope: string; address_key: string; ids: string[] }[];
  /** Not a hash of its currency at all (recorded before hashes were checked). */
  invalid: { id: string; transaction_id: string; reason: string }[];
}

/**
 * What canonicalising stored hashes would do. A payment recorded twice under two spellings is
 * only reported: each record may carry allocations, so which one stands is the merchant's call.
 */
export function planTransactionHashes(rows: StoredTransactionHash[]): TransactionHashPlan {
  const plan: TransactionHashPlan = { rewrite: [], duplicates: [], invalid: [] };
  const valid: { row: StoredTransactionHash; canonical: string }[] = [];
  for (const row of rows) {
    const checked = canonicalTransactionHash(row.currency, row.transaction_id);
    if (!checked.ok) {
      plan.invalid.push({ id: row.id, transaction_id: row.transaction_id, reason: checked.reason });
      continue;
    }
    valid.push({ row, canonical: checked.canonical });
  }
  for (const members of groupBy(valid, ({ row, canonical }) => [row.scope, row.currency, canonical, row.address_key].join('\n')).values()) {
    const [{ row, canonical }] = members;
    if (members.length > 1) {
      plan.duplicates.push({ canonical, currency: row.currency, scope: row.scope, address_key: row.address_key, ids: members.map((m) => m.row.id) });
    } else if (row.transaction_id !== canonical) {
      plan.rewrite.push({ id: row.id, from: row.transaction_id, canonical });
    }
  }
  return plan;
}
