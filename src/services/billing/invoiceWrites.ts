/**
 * An invoice's write protocol: every write to an invoice document goes through this module.
 *
 * The invoice's writers go one at a time on its next allocation slot, `<invoice>#<n>` (n = the
 * crypto allocations on the invoice; an insert on `_id`, atomic on FerretDB): the writer takes the
 * slot, reads the invoice again under it and writes from that read. A slot whose writer died is
 * settled once stale (ORPHAN_AFTER_MS) by the next writer that meets it (settleStaleInvoiceSlot).
 *
 * A payment's path, top to bottom: `allocateTransaction` (services/crypto/allocation.ts) ->
 * `applyCryptoAllocation`: the slot, the read under it, the write (`amount_paid`, `paid`, the
 * allocation appended), the report rollups marked, `invoice.paid`.
 *
 * Callers: the automatic and manual allocations (services/crypto/allocation.ts:
 * applyCryptoAllocation, the transaction slots, the settlement of a manual allocation), and through
 * `writeInvoiceHeld` every other change (services/billing/invoiceChanges.ts): the API's PATCH, the
 * overdue marking, line-item removal and the credit release.
 */
import { AllocationSlot, AllocationSlotDoc, CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { isDuplicateKey } from '../../models/errors';
import { Invoice, InvoiceDoc, InvoiceStatus, OPEN_INVOICE_STATUSES, paidMarks } from '../../models/invoice';
import { scopeOfDoc } from '../../models/scope';
import { randomHex } from '../../lib/ids';
import { sumAmounts } from '../../billing/money';
import { allocationEventPayload, presentCryptoTransaction } from '../../presenters/cryptoTransaction';
import { HeldWrite, Holds, writeHeld } from '../writes/heldWrites';
import { EventToRecord, recordEvent } from '../writes/events';
import { rollupsChanged } from '../reports/reportRollups';
import { invoiceEvent } from './invoiceLinks';
import type { Dependencies } from '../../dependencies';

// ---- the allocations, as the invoice and the transaction keep them ---------------------------

/** One crypto allocation as kept on the invoice (`crypto_allocations`, the invoice-side record of exactly-once). */
export interface InvoiceCryptoAllocation {
  id: string;
  transaction_id: string;
  amount_applied: string;
  pays_in_full: boolean;
  created_at: Date;
}

/** The crypto allocations recorded on an invoice document (a field outside the schema). */
export function cryptoAllocationsOf(invoice: InvoiceDoc): InvoiceCryptoAllocation[] {
  return ((invoice as unknown as { crypto_allocations?: InvoiceCryptoAllocation[] }).crypto_allocations ?? []).slice();
}

/** One allocation as its transaction lists it (`allocations`). */
export type Entry = { _id: string; invoice_id: string; amount_applied: string; pays_in_full: boolean; created_at: Date };

// ---- a payment: applyCryptoAllocation ------------------------------------------------------

/** The `invoice.paid` an allocation that paid `invoice` announces (keyed: recorded at most once), or null while it is not paid. */
export async function invoicePaidEvent(deps: Dependencies, invoice: InvoiceDoc, allocationId: string): Promise<EventToRecord | null> {
  if (invoice.status !== 'paid') return null;
  return { event: 'invoice.paid', payload: await invoiceEvent(deps, invoice), idempotencyKey: `invoice.paid:${invoice._id}:${allocationId}` };
}

async function recordInvoicePaidFor(deps: Dependencies, invoice: InvoiceDoc, allocationId: string): Promise<void> {
  const paid = await invoicePaidEvent(deps, invoice, allocationId);
  if (!paid) return;
  await recordEvent(scopeOfDoc(invoice), paid.event, paid.payload, paid);
  await deps.workflows.invoiceDue.close(invoice._id);
}

/**
 * Applies one crypto allocation to an invoice, exactly once and never over what the plan saw:
 * - the invoice is read; an allocation already on it is `already_applied` (a replay);
 * - `amount_paid`/`status` must still be what the caller planned from, else `conflict` (re-plan);
 * - the allocation takes slot `<invoice>#<n>` (n = allocations on the invoice) by an insert on
 *   `_id`, which FerretDB makes atomic: of two concurrent writers one gets `conflict`. A slot
 *   already holding this allocation (a crash between slot and invoice write) is completed
 *   with the slot's amounts;
 * - then the invoice is written: `amount_paid`, `paid` when in full, the allocation appended,
 *   and `invoice.paid` recorded with an idempotency key.
 * Returns the entry as applied (the slot's, on a completed retry).
 */
export async function applyCryptoAllocation(
  deps: Dependencies,
  invoiceId: string,
  entry: InvoiceCryptoAllocation,
  expected: { amount_paid: string; status: InvoiceStatus },
  /** The invoice as the caller just read it (what it planned from): the slot to take is named from it; it is read again under the slot. */
  seen?: InvoiceDoc,
  /**
   * 'caller': `invoice.paid` is not recorded here; the invoice as paid comes back as `paid`, for
   * the caller to record with its other events in one write (and a replay records it again).
   */
  announcePaid: 'here' | 'caller' = 'here',
): Promise<{ result: 'applied' | 'already_applied' | 'conflict'; entry: InvoiceCryptoAllocation; paid?: InvoiceDoc }> {
  const current = seen ?? (await Invoice.findById(invoiceId).lean<InvoiceDoc>());
  if (!current) return { result: 'conflict', entry };
  const entries = cryptoAllocationsOf(current);
  const existing = entries.find((e) => e.id === entry.id);
  if (existing) {
    if (existing.pays_in_full && announcePaid === 'caller') return { result: 'already_applied', entry: existing, paid: current };
    if (existing.pays_in_full) await recordInvoicePaidFor(deps, current, entry.id);
    return { result: 'already_applied', entry: existing };
  }
  if ((current.amount_paid ?? '0.00') !== expected.amount_paid || current.status !== expected.status) return { result: 'conflict', entry };
  const slotId = `${invoiceId}#${entries.length}`;
  let applied = entry;
  try {
    await AllocationSlot.collection.insertOne({ _id: slotId, allocation_id: entry.id, transaction_id: entry.transaction_id, invoice_id: invoiceId, amount_applied: entry.amount_applied, pays_in_full: entry.pays_in_full, created_at: entry.created_at } as never);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const slot = await AllocationSlot.findById(slotId).lean<AllocationSlotDoc>();
    if (!slot || slot.allocation_id !== entry.id) return { result: 'conflict', entry };
    applied = { id: slot.allocation_id, transaction_id: slot.transaction_id, amount_applied: slot.amount_applied, pays_in_full: slot.pays_in_full, created_at: slot.created_at };
  }
  // Under the slot, read again: a change holding the slot before (writeInvoiceHeld, below) may
  // have written since the read above; the write goes from this read, or not at all.
  const held = (await Invoice.collection.findOne({ _id: invoiceId } as never)) as InvoiceDoc | null;
  const heldEntries = held ? cryptoAllocationsOf(held) : [];
  if (heldEntries.some((e) => e.id === applied.id)) return { result: 'already_applied', entry: applied };
  if (!held || heldEntries.length !== entries.length || (held.amount_paid ?? '0.00') !== expected.amount_paid || held.status !== expected.status) {
    if (applied === entry) await AllocationSlot.deleteOne({ _id: slotId, allocation_id: entry.id });
    return { result: 'conflict', entry };
  }
  const now = new Date();
  const set: Record<string, unknown> = { amount_paid: sumAmounts([held.amount_paid ?? '0.00', applied.amount_applied]) };
  if (applied.pays_in_full) Object.assign(set, { status: 'paid' }, paidMarks(held.customer_id, now));
  const updated = (await Invoice.collection.findOneAndUpdate({ _id: invoiceId } as never, { $set: { ...set, updated_at: now }, $push: { crypto_allocations: applied } } as never, { returnDocument: 'after' })) as InvoiceDoc | null;
  if (updated) await rollupsChanged(deps, scopeOfDoc(updated), 'receivables');
  if (updated && applied.pays_in_full && announcePaid === 'caller') return { result: 'applied', entry: applied, paid: updated };
  if (updated && applied.pays_in_full) await recordInvoicePaidFor(deps, updated, applied.id);
  return { result: 'applied', entry: applied };
}

/** Re-records (keyed, so at most once) the `invoice.paid` of an allocation that paid the invoice. */
export async function ensureInvoicePaidEvent(deps: Dependencies, invoiceId: string, allocationId: string): Promise<void> {
  const invoice = await Invoice.findById(invoiceId).lean<InvoiceDoc>();
  if (invoice) await recordInvoicePaidFor(deps, invoice, allocationId);
}

// ---- every other change: held writes --------------------------------------------------------
//
// Every change other than a crypto allocation (services/billing/invoiceChanges.ts) holds the
// invoice's next allocation slot (`<invoice>#<n>`, applyCryptoAllocation above) while it writes.
// FerretDB v1 runs an update as a read of the whole document and a write of the whole document,
// with nothing held in between, so a filter such as `{ _id, status: 'pending' }` is no guard: an
// allocation and a void landing at once could each undo the other (the payment's `amount_paid`
// wiped by the void, or the void undone by the payment). Allocations take that slot too, so the
// slot makes the invoice's writers go one at a time; the holder reads the invoice again under it
// and writes from that read.

/**
 * An invoice's version is the number of its crypto allocations, and its hold is the slot of the
 * next one (`<invoice>#<n>`), which allocations take too; a holder that died (its slot stale) is
 * settled on the way (settleStaleInvoiceSlot, below). A change does not step the version.
 */
function invoiceHolds(deps: Dependencies): Holds {
  return {
    versionFields: { crypto_allocations: 1 },
    versionOf: (invoice) => cryptoAllocationsOf(invoice as InvoiceDoc).length,
    take: async (invoiceId, n) => {
      const slotId = `${invoiceId}#${n}`;
      try {
        await AllocationSlot.create({ _id: slotId, allocation_id: `hold:${randomHex(8)}`, transaction_id: '-', invoice_id: invoiceId, amount_applied: '0.00', pays_in_full: false, created_at: new Date() });
        return slotId;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Held by an allocation or another change: it ends in milliseconds, unless its writer died.
        await settleStaleInvoiceSlot(deps, invoiceId);
        return null;
      }
    },
    release: async (slotId) => {
      await AllocationSlot.deleteOne({ _id: slotId });
    },
    stepped: () => ({}),
  };
}

/**
 * Writes `plan(invoice)` (a `$set`, or null for nothing to write) while holding the invoice's
 * next allocation slot; `plan` sees the invoice as read under it and may throw (an ApiError) to
 * refuse. `busy` when other writers kept it for every try.
 */
export function writeInvoiceHeld(deps: Dependencies, invoiceId: string, plan: (invoice: InvoiceDoc) => Record<string, unknown> | null): Promise<HeldWrite<InvoiceDoc>> {
  return writeHeld<InvoiceDoc>(Invoice, invoiceId, (invoice) => withPaidMarks(invoice, plan(invoice)), { holds: invoiceHolds(deps) });
}

/** A change that moves the invoice to `paid` (by hand, or its lines removed down to what was paid) writes when. */
function withPaidMarks(invoice: InvoiceDoc, set: Record<string, unknown> | null): Record<string, unknown> | null {
  return set && set.status === 'paid' && invoice.status !== 'paid' ? { ...set, ...paidMarks(invoice.customer_id, new Date()) } : set;
}

// ---- a writer that died: settling its slots ------------------------------------------------
//
// A manual allocation (allocateManually, services/crypto/allocation.ts) writes, in order: the
// transaction's slot `<tx>#<n>` (serializes writers of its credit), the reservation on the
// transaction (entry pushed, credit taken), the invoice's slot `<invoice>#<m>`, then the invoice.
// A failure between those writes is settled at once by the request; one that killed the process
// is settled by the next writer that meets it, after ORPHAN_AFTER_MS (so a request that is merely
// slow is never undone under it):
// - an allocation whose invoice slot was taken is completed while the invoice is open (that slot
//   is the invoice's next allocation and nobody else can write it);
// - otherwise it is undone: the invoice slot freed first, then the reservation released.
// Settling holds the transaction's next slot, so settlers and new reservations never overlap.

/** A slot or reservation this old whose allocation never landed belongs to a request that died. */
export const ORPHAN_AFTER_MS = 60_000;

export const isStale = (createdAt: Date | string, now = Date.now()) => now - new Date(createdAt).getTime() >= ORPHAN_AFTER_MS;

export const invoiceEntryOf = (txId: string, e: Entry): InvoiceCryptoAllocation => ({ id: e._id, transaction_id: txId, amount_applied: e.amount_applied, pays_in_full: e.pays_in_full, created_at: e.created_at });

/**
 * Takes the transaction's next slot for `slot.allocation_id`: an atomic insert, so two writers
 * of its credit planned from the same state cannot both go on. Numbering follows the entries:
 * a slot of a live entry (numbering shifted by an undone allocation) is stepped over, and a
 * stale slot whose allocation never reached the transaction is removed. Null when another
 * writer holds it.
 */
export async function takeTransactionSlot(tx: CryptoTransactionDoc, slot: Omit<AllocationSlotDoc, '_id'>): Promise<string | null> {
  const live = new Set((tx.allocations ?? []).map((a) => a._id));
  let n = (tx.allocations ?? []).length;
  for (let tries = 0; tries < live.size + 3; tries++) {
    const id = `${tx._id}#${n}`;
    try {
      await AllocationSlot.create({ _id: id, ...slot });
      return id;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const held = await AllocationSlot.findById(id).lean<AllocationSlotDoc>();
    if (held && live.has(held.allocation_id)) n += 1;
    else if (held && isStale(held.created_at)) await AllocationSlot.deleteOne({ _id: id });
    else if (held) return null;
  }
  return null;
}

/** Removes the transaction slot that `allocationId` took, if any. */
async function freeTransactionSlotOf(tx: CryptoTransactionDoc, allocationId: string): Promise<void> {
  // Undone allocations shift numbering upwards a little; a slot missed here is removed once stale.
  for (let n = 0; n <= (tx.allocations ?? []).length + 10; n++) {
    const slot = await AllocationSlot.findById(`${tx._id}#${n}`).lean<AllocationSlotDoc>();
    if (slot?.allocation_id === allocationId) {
      await AllocationSlot.deleteOne({ _id: slot._id });
      return;
    }
  }
}

/** Events of a manual allocation, keyed: recording them again writes nothing. */
export async function announceManualAllocation(tx: CryptoTransactionDoc, entry: Entry): Promise<void> {
  const scope = scopeOfDoc(tx);
  await recordEvent(scope, 'transaction_allocation.created', allocationEventPayload(tx, entry), { idempotencyKey: `transaction_allocation.created:${entry._id}` });
  await recordEvent(scope, 'crypto_transaction.allocated', presentCryptoTransaction(tx), { idempotencyKey: `crypto_transaction.allocated:${tx._id}:${entry._id}` });
}

/**
 * Completes or undoes a manual allocation reserved on its transaction (see above): 'applied' when
 * the invoice already had it, 'completed' when it was applied now, 'undone', or 'pending' when
 * another writer holds the transaction's next slot (settled on a later call). One settler at a
 * time: it holds the transaction's next slot, as a reservation does, so neither a second settler
 * nor a new reservation writes the transaction or that invoice slot meanwhile.
 */
export async function settleManualAllocation(deps: Dependencies, txId: string, entry: Entry): Promise<'applied' | 'completed' | 'undone' | 'pending'> {
  const onInvoice = (inv: InvoiceDoc | null) => !!inv && cryptoAllocationsOf(inv).some((e) => e.id === entry._id);
  // Once on the invoice it stays there: no need to hold anything to see it.
  if (onInvoice(await Invoice.findById(entry.invoice_id).lean<InvoiceDoc>())) return 'applied';
  const tx = await CryptoTransaction.findById(txId).lean<CryptoTransactionDoc>();
  if (!tx) return 'undone';
  if (!(tx.allocations ?? []).some((a) => a._id === entry._id)) {
    // Never reserved (failed before its entry was written): only its transaction slot to free.
    await freeTransactionSlotOf(tx, entry._id);
    return 'undone';
  }
  const marker = await takeTransactionSlot(tx, { allocation_id: `settle:${entry._id}`, transaction_id: txId, invoice_id: entry.invoice_id, amount_applied: entry.amount_applied, pays_in_full: false, created_at: new Date() });
  if (!marker) return 'pending';
  try {
    const invoice = await Invoice.findById(entry.invoice_id).lean<InvoiceDoc>();
    if (onInvoice(invoice)) return 'applied';
    if (invoice) {
      const entries = cryptoAllocationsOf(invoice);
      const slotId = `${invoice._id}#${entries.length}`;
      const slot = await AllocationSlot.findById(slotId).lean<AllocationSlotDoc>();
      if (slot?.allocation_id === entry._id) {
        if (OPEN_INVOICE_STATUSES.includes(invoice.status)) {
          const r = await applyCryptoAllocation(deps, invoice._id, invoiceEntryOf(txId, entry), { amount_paid: invoice.amount_paid ?? '0.00', status: invoice.status });
          if (r.result !== 'conflict') return 'completed';
        }
        // No longer open (or changed under it): free the invoice slot, then the reservation.
        await AllocationSlot.deleteOne({ _id: slotId });
      }
    }
    // Read again under the marker: a credit release (services/billing/invoiceChanges.ts) may have written since.
    const held = (await CryptoTransaction.findById(txId).lean<CryptoTransactionDoc>()) ?? tx;
    // The whole list is written (FerretDB v1's $pull matches whole values only); the marker keeps other writers out.
    await CryptoTransaction.updateOne(
      { _id: txId },
      { $set: { unallocated_amount: sumAmounts([held.unallocated_amount ?? '0.00', entry.amount_applied]), allocations: held.allocations.filter((a) => a._id !== entry._id) } },
    );
    await rollupsChanged(deps, scopeOfDoc(tx), 'collections');
    await freeTransactionSlotOf(tx, entry._id);
    return 'undone';
  } finally {
    await AllocationSlot.deleteOne({ _id: marker });
  }
}

/**
 * Frees the invoice's next slot when it is stale and its allocation never reached the invoice:
 * a manual allocation is settled (completed or undone); any other (an automatic allocation
 * whose attempt died; its retry plans again) is undone by removing the slot.
 */
export async function settleStaleInvoiceSlot(deps: Dependencies, invoiceId: string): Promise<void> {
  const invoice = await Invoice.findById(invoiceId).lean<InvoiceDoc>();
  if (!invoice) return;
  const entries = cryptoAllocationsOf(invoice);
  const slot = await AllocationSlot.findById(`${invoiceId}#${entries.length}`).lean<AllocationSlotDoc>();
  if (!slot || entries.some((e) => e.id === slot.allocation_id) || !isStale(slot.created_at)) return;
  const tx = await CryptoTransaction.findById(slot.transaction_id).lean<CryptoTransactionDoc>();
  const reserved = tx?.allocations?.find((a) => a._id === slot.allocation_id);
  if (tx && reserved) {
    const entry: Entry = { ...reserved, pays_in_full: !!reserved.pays_in_full };
    if ((await settleManualAllocation(deps, tx._id, entry)) === 'completed') {
      const fresh = await CryptoTransaction.findById(tx._id).lean<CryptoTransactionDoc>();
      if (fresh) await announceManualAllocation(fresh, entry);
    }
    return;
  }
  await AllocationSlot.deleteOne({ _id: slot._id });
}
