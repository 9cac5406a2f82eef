/**
 * Changes to an invoice other than a crypto allocation: the API's PATCH, the due-date
 * workflow's overdue marking, and the line items a deleted price takes with it.
 *
 * Each writes through `writeInvoiceHeld` (services/billing/invoiceWrites.ts, the invoice's write
 * protocol): it holds the invoice's next allocation slot (`<invoice>#<n>`, which allocations take
 * too) while it writes, reads the invoice again under it and writes from that read, since on
 * FerretDB v1 a filter such as `{ _id, status: 'pending' }` is no guard (the reasons are there).
 */
import { AllocationSlot, CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { Invoice, InvoiceDoc, InvoiceStatus, OPEN_INVOICE_STATUSES } from '../../models/invoice';
import { Scope, scopeFilter, scopeOfDoc } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { afterLinesRemoved, creditReleased, ReleasableEntry, releaseSurplus } from '../../billing/lineRemoval';
import { compareAmounts, subtractAmounts, sumAmounts } from '../../billing/money';
import { presentCryptoTransaction } from '../../presenters/cryptoTransaction';
import { checkDueDate, findInvoice } from './invoices';
import { cryptoAllocationsOf, takeTransactionSlot, writeInvoiceHeld } from './invoiceWrites';
import { recordEvent } from '../writes/events';
import { rollupsChanged } from '../reports/reportRollups';
import { invoiceEvent, presentInvoiceWithLinks } from './invoiceLinks';
import type { Dependencies } from '../../dependencies';

export async function updateInvoice(deps: Dependencies, scope: Scope, id: string, input: { status?: InvoiceStatus; due_date?: string }) {
  await findInvoice(scope, id);
  const dueDate = input.due_date !== undefined ? checkDueDate(input.due_date) : undefined;
  const held = await writeInvoiceHeld(deps, id, (current) => {
    if (input.status !== undefined && current.status === 'canceled' && input.status !== 'canceled') {
      throw ApiError.invalid('A canceled invoice cannot change status', 'status');
    }
    const changes: Partial<InvoiceDoc> = {};
    if (dueDate !== undefined) changes.due_date = dueDate;
    if (input.status !== undefined) changes.status = input.status;
    return Object.keys(changes).length > 0 ? changes : null;
  });
  if (held.result === 'missing') throw ApiError.notFound('Invoice not found', 'id');
  if (held.result === 'busy') throw ApiError.conflict('invoice_changed', 'The invoice changed while updating; retry', 'status');
  const { before } = held;
  const invoice = held.result === 'written' ? held.after : before;
  // Status or due date: the receivables; marked paid by hand (or no longer paid): the collections.
  await rollupsChanged(deps, scope, 'receivables', ...(before.status !== invoice.status && (before.status === 'paid' || invoice.status === 'paid') ? (['collections'] as const) : []));
  const payload = await invoiceEvent(deps, invoice);
  await recordEvent(scope, 'invoice.updated', payload);
  if (input.status === 'paid' && before.status !== 'paid') await recordEvent(scope, 'invoice.paid', payload);
  if (invoice.status === 'pending') await deps.workflows.invoiceDue.watch(invoice, dueDate !== undefined && dueDate !== before.due_date);
  else if (!OPEN_INVOICE_STATUSES.includes(invoice.status)) await deps.workflows.invoiceDue.close(invoice._id);
  return presentInvoiceWithLinks(deps, invoice);
}

/**
 * `marked`: this call moved the invoice to overdue; `was_overdue`: an earlier call did (a retry);
 * `due_date_moved`: still pending, with another due date than the workflow waited for (a move
 * whose signal never reached it: the workflow waits for the stored one).
 */
export type OverdueOutcome = 'marked' | 'was_overdue' | 'not_pending' | { due_date_moved: string };

/**
 * Used by the due-date workflow's activity: pending -> overdue only if the invoice is still
 * pending with that due date. Idempotent: a retry re-records nothing (keyed event). Throws while
 * other writers hold the invoice (the activity is retried).
 */
export async function markInvoiceOverdue(deps: Dependencies, invoiceId: string, dueDate: string): Promise<OverdueOutcome> {
  const held = await writeInvoiceHeld(deps, invoiceId, (current) => (current.status === 'pending' && current.due_date === dueDate ? { status: 'overdue' } : null));
  if (held.result === 'busy') throw new Error(`invoice ${invoiceId} is held by other writers; retrying`);
  if (held.result === 'missing') return 'not_pending';
  const invoice = held.result === 'written' ? held.after : held.before;
  if (invoice.status === 'pending' && invoice.due_date !== dueDate) return { due_date_moved: invoice.due_date };
  if (invoice.status !== 'overdue' || invoice.due_date !== dueDate) return 'not_pending';
  // The receivables report lists each open invoice with its status.
  await rollupsChanged(deps, scopeOfDoc(invoice), 'receivables');
  await recordEvent(scopeOfDoc(invoice), 'invoice.overdue', await invoiceEvent(deps, invoice), {
    idempotencyKey: `invoice.overdue:${invoiceId}:${dueDate}`,
  });
  return held.result === 'written' ? 'marked' : 'was_overdue';
}

/**
 * Price deletes take their line items with them (spec cascade table). Before the prices go, so a 409 here can be retried.
 * An open invoice whose payments now cover its lower total is settled as paid (billing/lineRemoval.ts).
 */
export async function removeLineItemsOfPrices(deps: Dependencies, scope: Scope, priceIds: string[]): Promise<void> {
  const invoices = await Invoice.find({ ...scopeFilter(scope), 'line_items.price_id': { $in: priceIds } }).lean<InvoiceDoc[]>();
  for (const inv of invoices) {
    const held = await writeInvoiceHeld(deps, inv._id, (current) => {
      const kept = current.line_items.filter((l) => !priceIds.includes(l.price_id));
      if (kept.length === current.line_items.length) return null;
      const after = afterLinesRemoved({ status: current.status, amount_paid: current.amount_paid ?? '0.00' }, kept.map((l) => l.amount), deps.config.slippageTolerance);
      const set: Record<string, unknown> = { line_items: kept, total_amount: after.total_amount, ...(after.status !== current.status ? { status: after.status } : {}) };
      if (after.status === 'paid' && compareAmounts(after.surplus, '0.00') > 0) {
        // Paid beyond the new total: given back from the newest crypto allocations in this same
        // write, and to their transactions' credit after it (releaseInvoiceCredit, the intent).
        const { entries, released } = releaseSurplus(cryptoAllocationsOf(current), after.surplus);
        if (compareAmounts(released, '0.00') > 0) {
          Object.assign(set, { amount_paid: subtractAmounts(current.amount_paid ?? '0.00', released), crypto_allocations: entries, credit_release_due: true });
        }
      }
      return set;
    });
    if (held.result === 'busy') throw ApiError.conflict('invoice_changed', 'An invoice with this price changed while its line items were removed; retry', 'id');
    if (held.result === 'written' && held.after.status === 'paid' && held.before.status !== 'paid') {
      // Settled by what was already paid: announced like a payment that reaches the total (keyed: at most once).
      await recordEvent(scope, 'invoice.paid', await invoiceEvent(deps, held.after), { idempotencyKey: `invoice.paid:${inv._id}:line_items_removed` });
      await deps.workflows.invoiceDue.close(inv._id);
    }
    if (held.result === 'written' && held.after.credit_release_due) {
      // At once, as a rule (a transaction held by a manual allocation for milliseconds is waited
      // for briefly); a failure, or a transaction still being allocated, is left to the sweeper.
      for (let wait = 25; wait <= 200; wait *= 2) {
        const outcome = await releaseInvoiceCredit(deps, inv._id).catch((err) => deps.logger.warn({ err, invoice_id: inv._id }, 'credit release failed; left to the sweeper'));
        if (outcome !== 'waiting') break;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
  if (invoices.length > 0) await rollupsChanged(deps, scope, 'collections', 'receivables');
}

// ---- credit released by an invoice ----------------------------------------------------------
//
// An invoice whose line items went below what crypto paid gives the surplus back from its newest
// allocations in the same held write that removes the lines (each entry's `amount_applied` down,
// `released_amount` up, `amount_paid` down to the total) and is written `credit_release_due: true`.
// Then each transaction named by a released entry takes, under its own next slot (as manual
// allocations do), the invoice's `amount_applied` for that entry and the credit it lost
// (`unallocated_amount`), in one write: copying state, so a replay finds nothing to do. Last, the
// intent is cleared under the invoice's hold if no release landed meanwhile. A transaction still
// being allocated is waited for (its finish lists the invoice's entries as they are then).

export type CreditReleaseOutcome = 'released' | 'nothing_due' | 'waiting';

const releasedEntries = (invoice: InvoiceDoc): ReleasableEntry[] => cryptoAllocationsOf(invoice).filter((e) => compareAmounts((e as ReleasableEntry).released_amount ?? '0.00', '0.00') > 0);
const releaseKey = (entries: ReleasableEntry[]) => entries.map((e) => `${e.id}=${e.amount_applied}`).join(',');

/** One transaction's share of an invoice's release; 'waiting' while it cannot be written now (retried). */
async function creditTransaction(deps: Dependencies, invoiceId: string, txId: string, entries: ReleasableEntry[]): Promise<'done' | 'waiting'> {
  let tx = await CryptoTransaction.findById(txId).lean<CryptoTransactionDoc>();
  if (!tx) return 'done';
  // Its allocation's finish (or a manual allocation's reservation) writes the whole list: not raced.
  if (!tx.allocated_at || tx.allocation_due || !entries.every((e) => (tx!.allocations ?? []).some((a) => a._id === e.id))) return 'waiting';
  if (creditReleased(tx.allocations, tx.unallocated_amount ?? '0.00', entries).credited !== '0.00') {
    const slot = await takeTransactionSlot(tx, { allocation_id: `release:${invoiceId}`, transaction_id: txId, invoice_id: invoiceId, amount_applied: '0.00', pays_in_full: false, created_at: new Date() });
    if (!slot) return 'waiting';
    try {
      // Under the slot, read again and write from that read (a filter is no guard on FerretDB v1).
      const held = await CryptoTransaction.findById(txId).lean<CryptoTransactionDoc>();
      if (!held) return 'done';
      const next = creditReleased(held.allocations, held.unallocated_amount ?? '0.00', entries);
      tx = held;
      if (next.credited !== '0.00') {
        tx = (await CryptoTransaction.findOneAndUpdate({ _id: txId }, { $set: { allocations: next.allocations, unallocated_amount: next.unallocated_amount } }, { returnDocument: 'after' }).lean<CryptoTransactionDoc>()) ?? held;
        await rollupsChanged(deps, scopeOfDoc(tx), 'collections');
      }
    } finally {
      await AllocationSlot.deleteOne({ _id: slot });
    }
  }
  // Its allocations and credit changed: announced like a manual allocation's change (keyed by
  // what was released, so a replay records nothing and a later release is announced again).
  const released = sumAmounts(entries.map((e) => e.released_amount ?? '0.00'));
  await recordEvent(scopeOfDoc(tx), 'crypto_transaction.allocated', presentCryptoTransaction(tx), { idempotencyKey: `crypto_transaction.allocated:${txId}:released:${invoiceId}:${released}` });
  return 'done';
}

/**
 * Carries what an invoice released (see above) to its transactions' credit. Idempotent: 'nothing_due'
 * once done; 'waiting' when a transaction is still being allocated or held (the sweeper retries).
 */
export async function releaseInvoiceCredit(deps: Dependencies, invoiceId: string): Promise<CreditReleaseOutcome> {
  const invoice = await Invoice.findById(invoiceId).lean<InvoiceDoc>();
  if (!invoice?.credit_release_due) return 'nothing_due';
  const entries = releasedEntries(invoice);
  for (const txId of new Set(entries.map((e) => e.transaction_id))) {
    if ((await creditTransaction(deps, invoiceId, txId, entries.filter((e) => e.transaction_id === txId))) === 'waiting') return 'waiting';
  }
  // Cleared only if no other release landed since the read above (it is then carried on the next call).
  let moved = false;
  const cleared = await writeInvoiceHeld(deps, invoiceId, (current) => {
    moved = releaseKey(releasedEntries(current)) !== releaseKey(entries);
    return current.credit_release_due && !moved ? { credit_release_due: false } : null;
  });
  return cleared.result === 'busy' || moved ? 'waiting' : 'released';
}

/** The sweeper's pass: invoices whose release is still due `minAgeMs` after their last write; the number released. */
export async function sweepCreditReleases(deps: Dependencies, opts: { minAgeMs: number; batch: number }): Promise<number> {
  // `credit_release_due: true`: an equality FerretDB pushes down (to its index); the age is compared after.
  const due = (await Invoice.collection.find({ credit_release_due: true } as never, { projection: { _id: 1, updated_at: 1 } }).limit(opts.batch).toArray()) as unknown as { _id: string; updated_at: Date }[];
  let released = 0;
  for (const inv of due) {
    if (Date.now() - new Date(inv.updated_at).getTime() < opts.minAgeMs) continue;
    if ((await releaseInvoiceCredit(deps, inv._id)) === 'released') released += 1;
  }
  return released;
}
