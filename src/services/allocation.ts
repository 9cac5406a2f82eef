/**
 * Allocation of crypto transactions to invoices (DECISIONS.md, Crypto): price the amount in
 * USD at the transaction's timestamp, then pay the customer's open invoices oldest due date
 * first (account-wallet payments: the oldest open invoice whose balance matches within
 * slippage); what is left stays on the transaction as unallocated credit.
 *
 * Exactly once, without multi-document transactions:
 * - every invoice write goes through `applyCryptoAllocation`: it applies only if the invoice's
 *   `amount_paid`/`status` are what the plan was made from, takes the invoice's next allocation
 *   slot by an insert on `_id` (atomic on FerretDB, unlike a conditional findOneAndUpdate), and
 *   records the allocation id (derived from transaction + invoice) on the invoice. Two payments
 *   planned from the same snapshot: one wins, the other re-plans. So no invoice is ever
 *   over-applied, even if allocations of one customer run at the same moment;
 * - a replay (activity retry, crash in the middle) finds what this transaction already
 *   applied on the invoices themselves and only plans the rest;
 * - the transaction is finished once (`allocated_at`), and every event is recorded with an
 *   idempotency key.
 * In production allocations of one customer also run one after another in one workflow per
 * customer (workflows/allocation.ts), so conflicts are rare.
 */
import { createHash } from 'node:crypto';
import { AllocationSlot, CryptoTransaction, CryptoTransactionDoc } from '../models/cryptoTransaction';
import { isDuplicateKey } from '../models/errors';
import { Invoice, InvoiceDoc, InvoiceStatus } from '../models/invoice';
import { inScope, Scope } from '../models/scope';
import { ApiError } from '../lib/errors';
import { ID_PREFIX } from '../lib/ids';
import { allocatePayment, OpenInvoice } from '../crypto/allocation';
import { Dec, usdValue } from '../crypto/amounts';
import { sumAmounts, subtractAmounts, compareAmounts } from '../billing/money';
import { allocationEventPayload, presentCryptoTransaction } from '../presenters/cryptoTransaction';
import { applyCryptoAllocation, cryptoAllocationsOf, ensureInvoicePaidEvent, InvoiceCryptoAllocation } from './invoices';
import { getPriceOracle, PriceUnavailableError } from './priceOracle';
import { recordEvent } from './events';
import { getTemporal, hasTemporal } from '../temporal/context';
import { workflowIds } from '../temporal/workflowIds';
import { allocateSignal } from '../temporal/cryptoDefinitions';
import type { allocationWorkflow } from '../workflows/allocation';

const OPEN: InvoiceStatus[] = ['pending', 'overdue'];
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

let slippage = '0.005';
/** SLIPPAGE_TOLERANCE from config (set at start-up by the crypto domain and the activities). */
export function setSlippageTolerance(value: string): void {
  slippage = value;
}

/** Allocation ids derived from what they allocate, so a replay reuses the same id. */
export function allocationIdFor(...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('|')).digest();
  let out = '';
  for (let i = 0; out.length < 24; i++) out += BASE62[digest[i] % 62];
  return ID_PREFIX.allocation + out;
}

/** Workflow key: the paying customer, or the account and scope for account-wallet payments. */
export function allocationKey(tx: Pick<CryptoTransactionDoc, 'customer_id' | 'account_id' | 'sandbox'>): string {
  return tx.customer_id ?? `${tx.account_id}-${tx.sandbox ?? 'live'}`;
}

export class AllocationConflictError extends Error {}

const scopeOfDoc = (d: { account_id: string; sandbox?: string | null }): Scope => ({ accountId: d.account_id, sandbox: d.sandbox ?? null });

/** Sets `usd_value` (at the transaction's timestamp) once. PriceUnavailableError when the oracle cannot answer. */
export async function ensurePriced(tx: CryptoTransactionDoc): Promise<CryptoTransactionDoc> {
  if (tx.usd_value) return tx;
  const price = await getPriceOracle().usdPrice(tx.currency, new Date(tx.timestamp));
  const value = usdValue(tx.amount, price);
  // By `_id` alone (FerretDB v1 scans the collection inside the write for any other filter field);
  // the value is the same on every attempt (price at the fixed timestamp), so a racing write is harmless.
  const updated = await CryptoTransaction.findOneAndUpdate({ _id: tx._id }, { $set: { usd_value: value, usd_price: price } }, { returnDocument: 'after' }).lean<CryptoTransactionDoc>();
  return updated ?? tx;
}

function balanceOf(inv: InvoiceDoc): string {
  return subtractAmounts(inv.total_amount, inv.amount_paid ?? '0.00');
}

async function candidateInvoices(tx: CryptoTransactionDoc): Promise<InvoiceDoc[]> {
  const scope = scopeOfDoc(tx);
  const found = tx.customer_id
    ? await Invoice.find({ customer_id: tx.customer_id }).lean<InvoiceDoc[]>()
    // Every status, as for a customer: a replay must see the invoices an interrupted attempt already paid.
    : await Invoice.find({ account_id: tx.account_id, sandbox: tx.sandbox ?? null }).lean<InvoiceDoc[]>();
  return found.filter((i) => inScope(i, scope));
}

type Entry = { _id: string; invoice_id: string; amount_applied: string; pays_in_full: boolean; created_at: Date };

export interface AllocationOutcome {
  status: 'allocated' | 'already_allocated' | 'missing';
  allocations: number;
  unallocated: string | null;
}

/** Events of a finished allocation, each keyed: recording them again writes nothing. */
async function recordAllocationEvents(tx: CryptoTransactionDoc): Promise<void> {
  const scope = scopeOfDoc(tx);
  for (const a of tx.allocations ?? []) {
    await recordEvent(scope, 'transaction_allocation.created', allocationEventPayload(tx, a), { idempotencyKey: `transaction_allocation.created:${a._id}` });
    if (a.pays_in_full) await ensureInvoicePaidEvent(a.invoice_id, a._id);
  }
  if ((tx.allocations ?? []).length > 0) {
    await recordEvent(scope, 'crypto_transaction.allocated', presentCryptoTransaction(tx), { idempotencyKey: `crypto_transaction.allocated:${tx._id}` });
  }
}

/**
 * Allocates one transaction (idempotent; see the module comment). Throws
 * PriceUnavailableError (oracle down) or AllocationConflictError (invoices kept changing):
 * both are retried by the workflow.
 */
export async function allocateTransaction(txId: string, opts: { now?: Date; attempts?: number } = {}): Promise<AllocationOutcome> {
  const attempts = opts.attempts ?? 5;
  for (let attempt = 0; attempt < attempts; attempt++) {
    let tx = await CryptoTransaction.findById(txId).lean<CryptoTransactionDoc>();
    if (!tx) return { status: 'missing', allocations: 0, unallocated: null };
    if (tx.allocated_at) {
      await recordAllocationEvents(tx);
      return { status: 'already_allocated', allocations: tx.allocations.length, unallocated: tx.unallocated_amount ?? null };
    }
    tx = await ensurePriced(tx);
    const now = opts.now ?? new Date();
    const invoices = await candidateInvoices(tx);

    // What this transaction already applied (an earlier, interrupted attempt, or a manual allocation).
    const known = new Map<string, Entry>();
    for (const a of tx.allocations ?? []) known.set(a._id, { ...a, pays_in_full: !!a.pays_in_full });
    const touched = new Set<string>();
    for (const inv of invoices) {
      for (const e of cryptoAllocationsOf(inv)) {
        if (e.transaction_id !== tx._id) continue;
        touched.add(inv._id);
        if (!known.has(e.id)) known.set(e.id, { _id: e.id, invoice_id: inv._id, amount_applied: e.amount_applied, pays_in_full: e.pays_in_full, created_at: new Date(e.created_at) });
      }
    }
    const applied = sumAmounts([...known.values()].map((e) => e.amount_applied));
    const remaining = compareAmounts(tx.usd_value!, applied) > 0 ? subtractAmounts(tx.usd_value!, applied) : '0.00';

    const open: (OpenInvoice & { doc: InvoiceDoc })[] = invoices
      .filter((i) => OPEN.includes(i.status) && !touched.has(i._id))
      .map((i) => ({ id: i._id, due_date: i.due_date, created_at: new Date(i.created_at).toISOString(), balance: balanceOf(i), total: i.total_amount, doc: i }));
    const plan = allocatePayment({ paymentUsd: remaining, openInvoices: open, slippage, mode: tx.customer_id ? 'customer' : 'account' });

    let conflict = false;
    for (const p of plan.allocations) {
      const inv = open.find((o) => o.id === p.invoice_id)!.doc;
      const entry: InvoiceCryptoAllocation = {
        id: allocationIdFor(tx._id, inv._id),
        transaction_id: tx._id,
        amount_applied: p.amount_applied,
        pays_in_full: p.pays_in_full,
        created_at: now,
      };
      const r = await applyCryptoAllocation(inv._id, entry, { amount_paid: inv.amount_paid ?? '0.00', status: inv.status });
      if (r.result === 'conflict') {
        conflict = true;
        break;
      }
      const e = r.entry;
      if (!known.has(e.id)) known.set(e.id, { _id: e.id, invoice_id: inv._id, amount_applied: e.amount_applied, pays_in_full: e.pays_in_full, created_at: new Date(e.created_at) });
    }
    if (conflict) continue;

    // In order: what the transaction already listed, what an interrupted attempt left on invoices, then this plan.
    const entries = [...known.values()];
    const total = sumAmounts(entries.map((e) => e.amount_applied));
    const unallocated = subtractAmounts(tx.usd_value!, total);
    // `allocated_at` is checked in code, then the write is by `_id` alone (fast on FerretDB v1). Allocations of
    // one customer run one at a time in its workflow, and the entries are the same on a replay.
    const latest = await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>();
    const finished = latest && !latest.allocated_at
      ? await CryptoTransaction.findOneAndUpdate(
          { _id: tx._id },
          { $set: { allocations: entries, unallocated_amount: new Dec(unallocated).isNegative() ? '0.00' : unallocated, allocated_at: now } },
          { returnDocument: 'after' },
        ).lean<CryptoTransactionDoc>()
      : null;
    const final = finished ?? latest;
    if (!final) return { status: 'missing', allocations: 0, unallocated: null };
    await recordAllocationEvents(final);
    return { status: finished ? 'allocated' : 'already_allocated', allocations: final.allocations.length, unallocated: final.unallocated_amount ?? null };
  }
  throw new AllocationConflictError(`invoices of transaction ${txId} kept changing during allocation`);
}

/**
 * Starts allocation of a new transaction: a signal to the allocation workflow of its customer
 * (or account), started if needed. Without Temporal (plain API tests) it runs inline, and an
 * oracle failure leaves the transaction unallocated.
 */
export async function scheduleAllocation(tx: CryptoTransactionDoc): Promise<void> {
  if (!hasTemporal()) {
    try {
      await allocateTransaction(tx._id);
    } catch (err) {
      if (!(err instanceof PriceUnavailableError) && !(err instanceof AllocationConflictError)) throw err;
    }
    return;
  }
  const { client, taskQueue } = getTemporal();
  const key = allocationKey(tx);
  await client.workflow.signalWithStart<typeof allocationWorkflow, [string]>('allocationWorkflow', {
    workflowId: workflowIds.allocation(key),
    taskQueue,
    args: [{ key, pending: [] }],
    signal: allocateSignal,
    signalArgs: [tx._id],
  });
}

/** Manual allocation (`POST /v1/crypto_transactions/:id/allocations`). */
export async function allocateManually(
  scope: Scope,
  tx: CryptoTransactionDoc,
  loadInvoice: () => Promise<InvoiceDoc>,
  amountApplied: string | undefined,
): Promise<CryptoTransactionDoc> {
  let invoice = await loadInvoice();
  if (!OPEN.includes(invoice.status)) throw ApiError.invalid('Invoice is not open (pending or overdue)', 'invoice_id');
  if (!tx.allocated_at) {
    // Automatic allocation comes first (it may already pay this invoice); with Temporal it is the workflow's job.
    if (hasTemporal()) throw ApiError.conflict('allocation_in_progress', 'The transaction is still being allocated; retry shortly', 'id');
    try {
      await allocateTransaction(tx._id);
    } catch (err) {
      if (err instanceof PriceUnavailableError) throw ApiError.external('The price oracle is unavailable; retry later');
      throw err;
    }
    tx = (await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>())!;
    invoice = await loadInvoice();
    if (!OPEN.includes(invoice.status)) throw ApiError.invalid('Invoice is not open (pending or overdue)', 'invoice_id');
  }
  const available = tx.unallocated_amount ?? '0.00';
  const balance = balanceOf(invoice);
  let amount: string;
  if (amountApplied === undefined) {
    amount = compareAmounts(available, balance) < 0 ? available : balance;
  } else {
    if (!/^\d{1,13}(\.\d{1,2})?$/.test(amountApplied)) throw ApiError.invalid('Amount applied must be a decimal string with at most two decimals', 'amount_applied');
    amount = sumAmounts([amountApplied]);
  }
  if (compareAmounts(amount, '0.00') <= 0) {
    throw ApiError.invalid(amountApplied === undefined ? 'The transaction has no unallocated amount left' : 'Amount applied must be greater than 0', 'amount_applied');
  }
  if (compareAmounts(amount, available) > 0) throw ApiError.invalid(`Amount applied exceeds the unallocated amount of the transaction (${available})`, 'amount_applied');
  if (compareAmounts(amount, balance) > 0) throw ApiError.invalid(`Amount applied exceeds the invoice balance (${balance})`, 'amount_applied');
  const margin = new Dec(invoice.total_amount).times(slippage);
  const paysInFull = new Dec(balance).minus(amount).lte(margin);
  const now = new Date();
  const entry: Entry = { _id: allocationIdFor(tx._id, invoice._id, 'manual', String(tx.allocations.length)), invoice_id: invoice._id, amount_applied: amount, pays_in_full: paysInFull, created_at: now };

  // Reserve on the transaction first: slot `<tx>#<n>` by an atomic insert (see AllocationSlot), then the invoice.
  const txSlot = `${tx._id}#${tx.allocations.length}`;
  try {
    await AllocationSlot.create({ _id: txSlot, allocation_id: entry._id, transaction_id: tx._id, invoice_id: invoice._id, amount_applied: amount, pays_in_full: paysInFull, created_at: now });
  } catch (err) {
    if (isDuplicateKey(err)) throw ApiError.conflict('allocation_conflict', 'The transaction changed while allocating; retry', 'id');
    throw err;
  }
  const reserved = await CryptoTransaction.findOneAndUpdate(
    { _id: tx._id },
    { $set: { unallocated_amount: subtractAmounts(available, amount) }, $push: { allocations: entry } },
    { returnDocument: 'after' },
  ).lean<CryptoTransactionDoc>();
  if (!reserved) throw ApiError.notFound('Crypto transaction not found', 'id');
  const r = await applyCryptoAllocation(
    invoice._id,
    { id: entry._id, transaction_id: tx._id, amount_applied: amount, pays_in_full: paysInFull, created_at: now },
    { amount_paid: invoice.amount_paid ?? '0.00', status: invoice.status },
  );
  if (r.result === 'conflict') {
    await CryptoTransaction.updateOne({ _id: tx._id }, { $set: { unallocated_amount: available }, $pull: { allocations: { _id: entry._id } } });
    await AllocationSlot.deleteOne({ _id: txSlot });
    throw ApiError.conflict('allocation_conflict', 'The invoice changed while allocating; retry', 'invoice_id');
  }
  await recordEvent(scope, 'transaction_allocation.created', allocationEventPayload(reserved, entry), { idempotencyKey: `transaction_allocation.created:${entry._id}` });
  await recordEvent(scope, 'crypto_transaction.allocated', presentCryptoTransaction(reserved), { idempotencyKey: `crypto_transaction.allocated:${tx._id}:${entry._id}` });
  return reserved;
}

