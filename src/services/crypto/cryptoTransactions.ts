/**
 * Crypto transactions: manual entries (and, later, blockchain records), one per
 * (scope, currency, transaction hash, receiving address), listed by `timestamp` desc, and
 * allocated to invoices (services/crypto/allocation.ts) after they are recorded.
 */
import { createHash } from 'node:crypto';
import { AmountMismatch, AmountMismatchDoc, CryptoTransaction, CryptoTransactionDoc, TransactionSource } from '../../models/cryptoTransaction';
import { Wallet, WalletDoc } from '../../models/wallet';
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { CryptoCurrency, validateAddress } from '../../cryptocurrency/addresses';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { isDuplicateKey } from '../../models/errors';
import { newId, ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { parseDateTime } from '../../lib/dates';
import { cryptoAmountError, Dec } from '../../cryptocurrency/amounts';
import { canonicalTransactionHash } from '../../cryptocurrency/transactionHashes';
import { presentCryptoTransaction } from '../../presenters/cryptoTransaction';
import { findCryptoAddress, requireCurrency } from './cryptoAddresses';
import { findInvoice } from '../billing/invoices';
import { allocateManually, pricedFields, scheduleAllocation } from './allocation';
import type { Dependencies } from '../../dependencies';
import { recordEvent } from '../writes/events';
import { listPage } from '../writes/listing';
import { rollupsChanged } from '../reports/reportRollups';

export interface CryptoTransactionInput {
  to_address_id: string;
  amount: string;
  currency_code?: string;
  currency?: string;
  transaction_id: string;
  timestamp?: string;
  from_address_id?: string | null;
}

/** Accepted clock skew for a transaction timestamp ahead of the server's clock. */
const FUTURE_SKEW_MS = 5 * 60_000;

/**
 * One key per payment output: the hash in its canonical spelling (cryptocurrency/transactionHashes),
 * so `0xAB..`, `ab..` and `0Xab..` are one transaction. Keys of transactions stored canonically
 * before are unchanged (scripts/transaction-hashes.ts finds the others).
 */
export function dedupeKey(scope: Scope, currency: string, canonicalHash: string, addressKey: string): string {
  return createHash('sha256')
    .update([scope.accountId, scope.sandbox ?? '', currency, canonicalHash, addressKey].join('\n'))
    .digest('hex');
}

/** The hash in its currency's canonical spelling, or 422 `parameter_invalid` on `transaction_id`. */
export function requireTransactionHash(currency: CryptoCurrency, hash: string): string {
  if (!hash.trim()) throw ApiError.validation('transaction_id', "can't be blank");
  const checked = canonicalTransactionHash(currency, hash);
  if (!checked.ok) throw ApiError.invalid(`Transaction id is invalid: it ${checked.reason}`, 'transaction_id', { transaction_id: [checked.reason] });
  return checked.canonical;
}

/** The transaction already recorded for this payment to `address` in the scope, if any. */
export async function findRecordedPayment(scope: Scope, currency: CryptoCurrency, canonicalHash: string, address: CryptoAddressDoc): Promise<CryptoTransactionDoc | null> {
  return CryptoTransaction.findOne({ dedupe_key: dedupeKey(scope, currency, canonicalHash, address.address_key) }).lean<CryptoTransactionDoc>();
}

/** 422 on `transaction_id` naming the transaction that already records this payment. */
export function alreadyRecorded(existing: Pick<CryptoTransactionDoc, '_id' | 'transaction_source'>): ApiError {
  const how = existing.transaction_source === 'blockchain' ? 'detected on chain' : 'recorded by hand';
  return ApiError.invalid(`This transaction has already been recorded for this address as ${existing._id} (${how})`, 'transaction_id', {
    transaction_id: [`has already been recorded for this address as ${existing._id}`],
  });
}

function parseTimestamp(value: string | undefined): Date {
  if (value === undefined) return new Date();
  const d = parseDateTime(value, 'timestamp');
  if (d.getTime() > Date.now() + FUTURE_SKEW_MS) throw ApiError.validation('timestamp', 'cannot be in the future');
  return d;
}

export async function findCryptoTransaction(scope: Scope, id: string, param = 'id'): Promise<CryptoTransactionDoc> {
  const tx = await findInScope<CryptoTransactionDoc>(CryptoTransaction, scope, id);
  if (!tx) throw ApiError.notFound('Crypto transaction not found', param);
  return tx;
}

export interface RecordTransactionOptions {
  source: TransactionSource;
  paymentClaimId?: string;
  /** Block time of an on-chain payment (input.timestamp is for API callers). */
  timestamp?: Date;
  /** The sender as seen on chain, whether or not it is one of the scope's addresses. */
  senderAddress?: string | null;
  /** A derived id (an approved claim's transaction): a retry finds the transaction it recorded instead of a duplicate. */
  id?: string;
}

/**
 * Records a transaction, emits `crypto_transaction.received` and schedules its allocation. Returns the stored document. */
export async function recordCryptoTransaction(
  deps: Dependencies,
  scope: Scope,
  input: CryptoTransactionInput,
  opts: RecordTransactionOptions = { source: 'manual_entry' },
): Promise<CryptoTransactionDoc> {
  const address = await findCryptoAddress(scope, input.to_address_id, 'to_address_id');
  const currency = requireCurrency(input.currency_code ?? input.currency);
  if (currency !== address.currency) {
    throw ApiError.invalid(`Currency ${currency} does not match the address currency ${address.currency}`, 'currency_code', { currency_code: [`must match the address currency ${address.currency}`] });
  }
  const amountError = cryptoAmountError(currency, input.amount);
  if (amountError) throw ApiError.invalid(`Amount is invalid: ${amountError}`, 'amount', { amount: [amountError] });
  const transactionId = requireTransactionHash(currency, input.transaction_id);
  const timestamp = opts.timestamp ?? parseTimestamp(input.timestamp);
  let from: { id: string | null; address: string } | null = null;
  if (input.from_address_id) {
    const f = await findCryptoAddress(scope, input.from_address_id, 'from_address_id');
    from = { id: f._id, address: f.address };
  } else if (opts.senderAddress) {
    from = { id: await ownAddressId(scope, currency, opts.senderAddress), address: opts.senderAddress };
  }
  const id = opts.id ?? newId(ID_PREFIX.cryptoTransaction);
  const customerId = await customerOfAddress(scope, address);
  // Priced now when the price is at hand (no call out: the request does not wait on a price API);
  // else its allocation prices it (services/crypto/allocation.ts ensurePriced).
  const price = deps.priceOracle.knownPrice?.(currency, timestamp) ?? null;
  let tx: CryptoTransactionDoc;
  try {
    tx = (
      await CryptoTransaction.create({
        _id: id,
        ...scopeFilter(scope),
        currency,
        amount: input.amount,
        transaction_id: transactionId,
        transaction_source: opts.source,
        timestamp,
        from_address_id: from?.id ?? null,
        from_address: from?.address ?? null,
        to_address_id: address._id,
        to_address: address.address,
        wallet_id: address.wallet_id,
        customer_id: customerId,
        dedupe_key: dedupeKey(scope, currency, transactionId, address.address_key),
        payment_claim_id: opts.paymentClaimId ?? null,
        // Its own allocation intent: a sweeper signals it if the signal below never goes.
        allocation_due: true,
        ...(price === null ? {} : pricedFields(input.amount, price)),
      })
    ).toObject() as CryptoTransactionDoc;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    // Recorded before. The first attempt may have died after its insert (a busy database answered
    // 500, a crashed worker): finish what it may not have, at most once (both steps are keyed).
    const existing = await findRecordedPayment(scope, currency, transactionId, address);
    // The watcher recording a payment again after a retry, or one recorded by hand first: the
    // existing transaction is the answer, left as it is (it may be allocated already); an
    // amount the chain contradicts is flagged for the merchant instead of silently kept.
    if (existing && opts.source === 'blockchain') {
      if (existing.transaction_source !== 'blockchain' && !new Dec(existing.amount).eq(input.amount)) await flagAmountMismatch(scope, existing, input.amount);
      return announce(deps, scope, existing);
    }
    // The same derived id: this caller's own earlier attempt recorded it.
    if (existing && opts.id !== undefined && existing._id === opts.id) return announce(deps, scope, existing);
    // A manual entry is still refused; if it was never allocated, that is scheduled on the way.
    if (existing && !existing.allocated_at) await announce(deps, scope, existing);
    throw existing ? alreadyRecorded(existing) : ApiError.invalid('This transaction has already been recorded for this address', 'transaction_id', { transaction_id: ['has already been recorded for this address'] });
  }
  return announce(deps, scope, tx);
}

/** `crypto_transaction.received` (once per transaction) and allocation: both safe to repeat. */
async function announce(deps: Dependencies, scope: Scope, tx: CryptoTransactionDoc): Promise<CryptoTransactionDoc> {
  await rollupsChanged(deps, scope, 'collections');
  await recordEvent(scope, 'crypto_transaction.received', presentCryptoTransaction(tx), { idempotencyKey: `crypto_transaction.received:${tx._id}` });
  await scheduleAllocation(deps, tx);
  return tx;
}

/**
 * The chain paid another amount than a transaction recorded by hand (or by an approved claim)
 * says: flagged once, with both amounts, and told to the merchant by
 * `crypto_transaction.amount_mismatch`. The transaction and its allocations stay as they are:
 * what to do about the difference is the merchant's call.
 */
async function flagAmountMismatch(scope: Scope, tx: CryptoTransactionDoc, chainAmount: string): Promise<void> {
  const mismatch: AmountMismatchDoc = {
    _id: tx._id, ...scopeFilter(scope), currency: tx.currency, transaction_id: tx.transaction_id,
    recorded_amount: tx.amount, chain_amount: chainAmount, detected_at: new Date(),
  };
  try {
    await AmountMismatch.collection.insertOne(mismatch as never);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const flagged = (await AmountMismatch.findById(tx._id).lean<AmountMismatchDoc>()) ?? mismatch;
  await recordEvent(scope, 'crypto_transaction.amount_mismatch', presentCryptoTransaction(tx, flagged), { idempotencyKey: `crypto_transaction.amount_mismatch:${tx._id}` });
}

/** The mismatch flags of these transactions, by transaction id (few exist: one read per page). */
async function mismatchesOf(scope: Scope, ids: string[]): Promise<Map<string, AmountMismatchDoc>> {
  if (ids.length === 0) return new Map();
  const rows = ids.length === 1
    ? await AmountMismatch.find({ _id: ids[0] }).lean<AmountMismatchDoc[]>()
    : await AmountMismatch.find({ ...scopeFilter(scope), _id: { $in: ids } }).lean<AmountMismatchDoc[]>();
  return new Map(rows.filter((r) => r.account_id === scope.accountId && (r.sandbox ?? null) === scope.sandbox).map((r) => [r._id, r]));
}

/** Transactions as the API shows them, each with its mismatch flag. */
export async function presentCryptoTransactions(scope: Scope, txs: CryptoTransactionDoc[]) {
  const flags = await mismatchesOf(scope, txs.map((t) => t._id));
  return txs.map((t) => presentCryptoTransaction(t, flags.get(t._id) ?? null));
}

/** The customer whose wallet holds the address (null for an account wallet): kept on the address, else its wallet's. */
async function customerOfAddress(scope: Scope, address: CryptoAddressDoc): Promise<string | null> {
  if (address.customer_id !== undefined) return address.customer_id ?? null;
  const wallet = await findInScope<WalletDoc>(Wallet, scope, address.wallet_id);
  return wallet?.owner_type === 'customer' ? wallet.owner_id : null;
}

/** The id of the scope's own address `address` (a payment between two of its addresses), else null. */
async function ownAddressId(scope: Scope, currency: CryptoCurrency, address: string): Promise<string | null> {
  const checked = validateAddress(currency, address, 'test');
  if (!checked.ok) return null;
  const own = await CryptoAddress.findOne({ ...scopeFilter(scope), currency, address_key: checked.canonical }).lean<CryptoAddressDoc>();
  return own?._id ?? null;
}

/** `POST /v1/crypto_transactions`: the transaction as recorded (allocation follows). */
/** Under an Idempotency-Key, a retry after a request that died after its write gets that transaction, not "already recorded" (services/writes/creation.ts). */
export async function createCryptoTransaction(deps: Dependencies, scope: Scope, input: CryptoTransactionInput, opts: CreateOptions = {}) {
  const id = opts.idempotencyKeyId ? createdId(ID_PREFIX.cryptoTransaction, opts) : undefined;
  return presentCryptoTransaction(await recordCryptoTransaction(deps, scope, input, { source: 'manual_entry', id }));
}

export async function getCryptoTransaction(scope: Scope, id: string) {
  return (await presentCryptoTransactions(scope, [await findCryptoTransaction(scope, id)]))[0];
}

export async function listCryptoTransactions(scope: Scope, page: number) {
  const { items, pagination } = await listPage<CryptoTransactionDoc>(CryptoTransaction, scopeFilter(scope), page, { timestamp: -1, _id: -1 });
  return { crypto_transactions: await presentCryptoTransactions(scope, items), pagination };
}

export async function createManualAllocation(deps: Dependencies, scope: Scope, id: string, input: { invoice_id: string; amount_applied?: string }) {
  const tx = await findCryptoTransaction(scope, id);
  const loadInvoice = () => findInvoice(scope, input.invoice_id, 'invoice_id');
  await loadInvoice();
  return (await presentCryptoTransactions(scope, [await allocateManually(deps, tx, loadInvoice, input.amount_applied)]))[0];
}
