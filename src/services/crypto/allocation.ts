/**
 * Allocation of crypto transactions to invoices (docs/adr/0404-allocation-rules.md): price the amount in
 * USD at the transaction's timestamp, then pay the customer's open invoices oldest due date
 * first (account-wallet payments: the oldest open invoice whose balance matches within
 * slippage); what is left stays on the transaction as unallocated credit.
 *
 * Exactly once, without multi-document transactions:
 * - every invoice write goes through `applyCryptoAllocation` (services/billing/invoiceWrites.ts,
 *   the invoice's write protocol): it applies only if the invoice's `amount_paid`/`status` are
 *   what the plan was made from, takes the invoice's next allocation slot by an insert on `_id`
 *   (atomic on FerretDB, unlike a conditional findOneAndUpdate), and records the allocation id
 *   (derived from transaction + invoice) on the invoice. Two payments
 *   planned from the same snapshot: one wins, the other re-plans. So no invoice is ever
 *   over-applied, even if allocations of one customer run at the same moment;
 * - a replay (activity retry, crash in the middle) finds what this transaction already
 *   applied on the invoices themselves and only plans the rest;
 * - the transaction is finished once (`allocated_at`), and every event is recorded with an
 *   idempotency key.
 * In production allocations of one customer also run one after another in one workflow per
 * customer (workflows/allocation.ts), so conflicts are rare.
 */
import { AllocationSlot, AllocationSlotDoc, CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { findOpenInvoices, Invoice, InvoiceDoc, OPEN_INVOICE_STATUSES } from '../../models/invoice';
import { inScope, scopeFilter, scopeOfDoc } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { derivedId, ID_PREFIX, randomHex } from '../../lib/ids';
import { allocatePayment, OpenInvoice } from '../../cryptocurrency/allocation';
import { Dec, usdValue } from '../../cryptocurrency/amounts';
import { sumAmounts, subtractAmounts, compareAmounts } from '../../billing/money';
import { allocationEventPayload, presentCryptoTransaction } from '../../presenters/cryptoTransaction';
import {
  announceManualAllocation,
  applyCryptoAllocation,
  cryptoAllocationsOf,
  ensureInvoicePaidEvent,
  Entry,
  InvoiceCryptoAllocation,
  invoiceEntryOf,
  invoicePaidEvent,
  isStale,
  settleManualAllocation,
  settleStaleInvoiceSlot,
  takeTransactionSlot,
} from '../billing/invoiceWrites';
import { EventToRecord, recordEvents } from '../writes/events';
import type { Dependencies } from '../../dependencies';
import type { Allocatable } from '../../temporal/clients/allocation';
import { rollupsChanged } from '../reports/reportRollups';

export { allocationKey } from '../../temporal/clients/allocation';


/** Allocation ids derived from what they allocate (parts joined by `|`), so a replay reuses the same id. */
export function allocationIdFor(...parts: string[]): string {
  return derivedId(ID_PREFIX.allocation, parts.join('|'));
}

export class AllocationConflictError extends Error {}


/** What a transaction of `amount` priced at `price` USD a coin holds (written at its record, or by ensurePriced). */
export function pricedFields(amount: string, price: string): Pick<CryptoTransactionDoc, 'usd_price' | 'usd_value'> {
  return { usd_price: price, usd_value: usdValue(amount, price) };
}

/** Sets `usd_value` (at the transaction's timestamp) once. PriceUnavailableError when the oracle cannot answer. */
export async function ensurePriced(deps: Dependencies, tx: CryptoTransactionDoc): Promise<CryptoTransactionDoc> {
  if (tx.usd_value) return tx;
  const price = await deps.priceOracle.usdPrice(tx.currency, new Date(tx.timestamp));
  // By `_id` alone (FerretDB v1 scans the collection inside the write for any other filter field);
  // the value is the same on every attempt (price at the fixed timestamp), so a racing write is harmless.
  const updated = (await CryptoTransaction.collection.findOneAndUpdate({ _id: tx._id } as never, { $set: { ...pricedFields(tx.amount, price), updated_at: new Date() } }, { returnDocument: 'after' })) as CryptoTransactionDoc | null;
  // Not marked for the collections rollup here: the allocation's finish writes the transaction
  // again and marks it after (one change of the source, marked once after its last write).
  return updated ?? tx;
}

function balanceOf(inv: InvoiceDoc): string {
  return subtractAmounts(inv.total_amount, inv.amount_paid ?? '0.00');
}

/**
 * The invoices a transaction's allocation plans from: the payer's open invoices, and those an
 * interrupted attempt of this transaction already wrote, whatever their status now (a replay must
 * see what it paid). The open ones are read by status, each query two equalities FerretDB pushes
 * down (payer and status, both indexed), and the others are named by the allocation slots the
 * transaction took (every allocation on an invoice has one, inserted before the invoice write): so
 * the read grows with what is open and what this transaction touched, not with the payer's history.
 * Oldest first, as they were created.
 */
async function candidateInvoices(tx: CryptoTransactionDoc): Promise<InvoiceDoc[]> {
  const scope = scopeOfDoc(tx);
  const payer = tx.customer_id ? { customer_id: tx.customer_id } : scopeFilter(scope);
  const [open, slots] = await Promise.all([
    findOpenInvoices(payer),
    AllocationSlot.collection.find({ transaction_id: tx._id } as never, { projection: { invoice_id: 1 } }).toArray() as unknown as Promise<Pick<AllocationSlotDoc, 'invoice_id'>[]>,
  ]);
  const found = new Map(open.map((i) => [i._id, i]));
  const touchedIds = [...new Set(slots.map((s) => s.invoice_id))].filter((id) => !found.has(id));
  for (const touched of await Promise.all(touchedIds.map((id) => Invoice.collection.findOne({ _id: id } as never) as Promise<InvoiceDoc | null>))) {
    if (touched) found.set(touched._id, touched);
  }
  return [...found.values()]
    .filter((i) => inScope(i, scope))
    .sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || a._id.localeCompare(b._id));
}

export interface AllocationOutcome {
  status: 'allocated' | 'already_allocated' | 'missing';
  allocations: number;
  unallocated: string | null;
}

/**
 * Events of a finished allocation, each keyed (recording them again writes nothing), in one
 * write: per allocation `transaction_allocation.created` and, when it paid its invoice,
 * `invoice.paid`; then `crypto_transaction.allocated`. `paidNow`: the invoices this attempt paid,
 * as written (the others are read again: a replay of an attempt that died after the invoice write).
 */
async function recordAllocationEvents(deps: Dependencies, tx: CryptoTransactionDoc, paidNow: ReadonlyMap<string, InvoiceDoc> = new Map()): Promise<void> {
  const allocations = tx.allocations ?? [];
  if (allocations.length === 0) return;
  const paid = await Promise.all(
    allocations.map(async (a) => {
      if (!a.pays_in_full) return null;
      const invoice = paidNow.get(a._id) ?? (await Invoice.findById(a.invoice_id).lean<InvoiceDoc>());
      return invoice ? invoicePaidEvent(deps, invoice, a._id) : null;
    }),
  );
  const events: EventToRecord[] = allocations.flatMap((a, i) => [
    { event: 'transaction_allocation.created' as const, payload: allocationEventPayload(tx, a), idempotencyKey: `transaction_allocation.created:${a._id}` },
    ...(paid[i] ? [paid[i]] : []),
  ]);
  events.push({ event: 'crypto_transaction.allocated', payload: presentCryptoTransaction(tx), idempotencyKey: `crypto_transaction.allocated:${tx._id}` });
  await recordEvents(scopeOfDoc(tx), events);
  // A paid invoice's due date no longer matters (after its event, as for any other payment).
  await Promise.all(allocations.filter((_, i) => paid[i]).map((a) => deps.workflows.invoiceDue.close(a.invoice_id)));
}

/**
 * Allocates one transaction (idempotent; see the module comment). Throws
 * PriceUnavailableError (oracle down) or AllocationConflictError (invoices kept changing):
 * both are retried by the workflow.
 */
export async function allocateTransaction(deps: Dependencies, txId: string, opts: { now?: Date; attempts?: number } = {}): Promise<AllocationOutcome> {
  const attempts = opts.attempts ?? 5;
  for (let attempt = 0; attempt < attempts; attempt++) {
    // After a conflict: an invoice change holds the invoice for a few milliseconds (services/billing/invoiceWrites.ts writeInvoiceHeld).
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt));
    let tx = (await CryptoTransaction.collection.findOne({ _id: txId } as never)) as CryptoTransactionDoc | null;
    if (!tx) return { status: 'missing', allocations: 0, unallocated: null };
    if (tx.allocated_at) {
      // Finished, but still due: written by a finish that raced another (both wrote the same entries).
      if (tx.allocation_due) await CryptoTransaction.updateOne({ _id: tx._id }, { $set: { allocation_due: false } });
      await recordAllocationEvents(deps, tx);
      return { status: 'already_allocated', allocations: tx.allocations.length, unallocated: tx.unallocated_amount ?? null };
    }
    tx = await ensurePriced(deps, tx);
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
      .filter((i) => OPEN_INVOICE_STATUSES.includes(i.status) && !touched.has(i._id))
      .map((i) => ({ id: i._id, due_date: i.due_date, created_at: new Date(i.created_at).toISOString(), balance: balanceOf(i), total: i.total_amount, doc: i }));
    const plan = allocatePayment({ paymentUsd: remaining, openInvoices: open, slippage: deps.config.slippageTolerance, mode: tx.customer_id ? 'customer' : 'account' });

    let conflict = false;
    const paidNow = new Map<string, InvoiceDoc>();
    for (const p of plan.allocations) {
      const inv = open.find((o) => o.id === p.invoice_id)!.doc;
      const entry: InvoiceCryptoAllocation = {
        id: allocationIdFor(tx._id, inv._id),
        transaction_id: tx._id,
        amount_applied: p.amount_applied,
        pays_in_full: p.pays_in_full,
        created_at: now,
      };
      const r = await applyCryptoAllocation(deps, inv._id, entry, { amount_paid: inv.amount_paid ?? '0.00', status: inv.status }, inv, 'caller');
      if (r.result === 'conflict') {
        // Its next slot may be held by an allocation that died half-way: settled, so the next attempt goes through.
        await settleStaleInvoiceSlot(deps, inv._id);
        conflict = true;
        break;
      }
      const e = r.entry;
      // Paid by this allocation (now, or by an earlier attempt): announced with the other events.
      if (r.paid) paidNow.set(e.id, r.paid);
      if (!known.has(e.id)) known.set(e.id, { _id: e.id, invoice_id: inv._id, amount_applied: e.amount_applied, pays_in_full: e.pays_in_full, created_at: new Date(e.created_at) });
    }
    if (conflict) continue;

    // In order: what the transaction already listed, what an interrupted attempt left on invoices, then this plan.
    const entries = [...known.values()];
    const total = sumAmounts(entries.map((e) => e.amount_applied));
    const unallocated = subtractAmounts(tx.usd_value!, total);
    // `allocated_at` was checked in code when this attempt read the transaction; the write is by
    // `_id` alone (a filter is no guard on FerretDB v1 anyway). Allocations of one customer run
    // one at a time in its workflow, a manual allocation waits for `allocated_at`, and a replay
    // writes the same entries (derived ids).
    const finished = (await CryptoTransaction.collection.findOneAndUpdate(
      { _id: tx._id } as never,
      { $set: { allocations: entries, unallocated_amount: new Dec(unallocated).isNegative() ? '0.00' : unallocated, allocated_at: now, allocation_due: false, updated_at: new Date() } },
      { returnDocument: 'after' },
    )) as CryptoTransactionDoc | null;
    if (!finished) return { status: 'missing', allocations: 0, unallocated: null };
    await rollupsChanged(deps, scopeOfDoc(finished), 'collections');
    await recordAllocationEvents(deps, finished, paidNow);
    return { status: 'allocated', allocations: finished.allocations.length, unallocated: finished.unallocated_amount ?? null };
  }
  throw new AllocationConflictError(`invoices of transaction ${txId} kept changing during allocation`);
}

/** Starts allocation of a transaction already recorded (see `AllocationWorkflows.request`). */
export async function scheduleAllocation(deps: Pick<Dependencies, 'workflows'>, tx: Allocatable): Promise<void> {
  await deps.workflows.allocation.request(tx);
}

// ---- manual allocation ----------------------------------------------------------------------
//
// Its writes, and how one that died half-way is settled (completed or undone), are the invoice's
// write protocol: services/billing/invoiceWrites.ts (takeTransactionSlot, settleManualAllocation).

/**
 * Settles the request's own allocation. 'pending' only means a concurrent writer holds the
 * transaction's next slot for the length of its request: waited out briefly, and past that the
 * reservation is settled as an orphan by the next writer after ORPHAN_AFTER_MS.
 */
async function settleOwnAllocation(deps: Dependencies, txId: string, entry: Entry): Promise<'applied' | 'completed' | 'undone' | 'pending'> {
  let settled = await settleManualAllocation(deps, txId, entry);
  for (let wait = 25; settled === 'pending' && wait <= 1_600; wait *= 2) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    settled = await settleManualAllocation(deps, txId, entry);
  }
  return settled;
}

/** Manual entries (made after automatic allocation finished) old enough to be settled if they never reached their invoice. */
function staleManualEntries(tx: CryptoTransactionDoc): Entry[] {
  const after = tx.allocated_at ? new Date(tx.allocated_at).getTime() : Infinity;
  return (tx.allocations ?? []).filter((e) => new Date(e.created_at).getTime() > after && isStale(e.created_at)).map((e) => ({ ...e, pays_in_full: !!e.pays_in_full }));
}

/** Settles the manual allocations of `tx` that have been reserved for too long without reaching their invoice. */
async function settleStaleReservations(deps: Dependencies, tx: CryptoTransactionDoc): Promise<void> {
  for (const entry of staleManualEntries(tx)) {
    const settled = await settleManualAllocation(deps, tx._id, entry);
    if (settled === 'completed') {
      const fresh = await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>();
      if (fresh) await announceManualAllocation(fresh, entry);
    }
  }
}

/** Manual allocation (`POST /v1/crypto_transactions/:id/allocations`). */
export async function allocateManually(
  deps: Dependencies,
  tx: CryptoTransactionDoc,
  loadInvoice: () => Promise<InvoiceDoc>,
  amountApplied: string | undefined,
): Promise<CryptoTransactionDoc> {
  let invoice = await loadInvoice();
  if (!OPEN_INVOICE_STATUSES.includes(invoice.status)) throw ApiError.invalid('Invoice is not open (pending or overdue)', 'invoice_id');
  if (!tx.allocated_at) {
    // Automatic allocation comes first (it may already pay this invoice): the allocation workflow's job.
    await deps.workflows.allocation.allocateFirst(tx._id);
    tx = (await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>())!;
    invoice = await loadInvoice();
    if (!OPEN_INVOICE_STATUSES.includes(invoice.status)) throw ApiError.invalid('Invoice is not open (pending or overdue)', 'invoice_id');
  } else if (staleManualEntries(tx).length > 0) {
    // An earlier manual allocation of this transaction may have died half-way: settle it first.
    await settleStaleReservations(deps, tx);
    tx = (await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>())!;
    invoice = await loadInvoice();
    if (!OPEN_INVOICE_STATUSES.includes(invoice.status)) throw ApiError.invalid('Invoice is not open (pending or overdue)', 'invoice_id');
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
  const margin = new Dec(invoice.total_amount).times(deps.config.slippageTolerance);
  const paysInFull = new Dec(balance).minus(amount).lte(margin);
  const now = new Date();
  // Random part: an undone allocation's id is never reused by the next one.
  const entry: Entry = { _id: allocationIdFor(tx._id, invoice._id, 'manual', randomHex(12)), invoice_id: invoice._id, amount_applied: amount, pays_in_full: paysInFull, created_at: now };

  // Reserve on the transaction first (its slot, then the entry and the credit), then the invoice.
  const txSlot = await takeTransactionSlot(tx, { allocation_id: entry._id, transaction_id: tx._id, invoice_id: invoice._id, amount_applied: amount, pays_in_full: paysInFull, created_at: now });
  if (!txSlot) throw ApiError.conflict('allocation_conflict', 'The transaction changed while allocating; retry', 'id');
  let reserved: CryptoTransactionDoc | null;
  let result: 'applied' | 'already_applied' | 'conflict';
  try {
    // Under the slot, read again: a credit release (services/billing/invoiceChanges.ts) raises the credit
    // under the transaction's slot too, and may have landed since the read above.
    const held = await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>();
    const credit = held?.unallocated_amount ?? available;
    if (compareAmounts(amount, credit) > 0) {
      await AllocationSlot.deleteOne({ _id: txSlot });
      throw ApiError.conflict('allocation_conflict', 'The transaction changed while allocating; retry', 'id');
    }
    reserved = await CryptoTransaction.findOneAndUpdate(
      { _id: tx._id },
      { $set: { unallocated_amount: subtractAmounts(credit, amount) }, $push: { allocations: entry } },
      { returnDocument: 'after' },
    ).lean<CryptoTransactionDoc>();
    if (!reserved) {
      await AllocationSlot.deleteOne({ _id: txSlot });
      throw ApiError.notFound('Crypto transaction not found', 'id');
    }
    await rollupsChanged(deps, scopeOfDoc(reserved), 'collections');
    result = (await applyCryptoAllocation(deps, invoice._id, invoiceEntryOf(tx._id, entry), { amount_paid: invoice.amount_paid ?? '0.00', status: invoice.status })).result;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // Failed half-way (the database): complete or undo now, so nothing is left blocking the invoice.
    const settled = await settleOwnAllocation(deps, tx._id, entry).catch(() => 'pending' as const);
    if (settled !== 'completed' && settled !== 'applied') throw err;
    // Applied before the failure: what followed the write (its `invoice.paid`) may not have happened.
    if (settled === 'applied' && paysInFull) await ensureInvoicePaidEvent(deps, invoice._id, entry._id);
    reserved = await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>();
    result = 'applied';
  }
  if (result === 'conflict') {
    // Undone before answering, so a 409 never leaves credit reserved (or, worse, applied) behind.
    const settled = await settleOwnAllocation(deps, tx._id, entry);
    if (settled === 'applied' || settled === 'completed') {
      reserved = await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>();
    } else {
      // The invoice's next slot may be held by an allocation that died: settled here, so a retry goes through.
      await settleStaleInvoiceSlot(deps, invoice._id);
      throw ApiError.conflict('allocation_conflict', 'The invoice changed while allocating; retry', 'invoice_id');
    }
  }
  await announceManualAllocation(reserved!, entry);
  return reserved!;
}
