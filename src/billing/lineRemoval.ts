/**
 * An invoice after some of its line items went (a deleted price takes its lines with it, spec
 * cascade table). Payments already applied stay applied, so the new total may fall to or below
 * what was paid: such an open invoice is settled as paid (by the allocation's rule: what is left
 * is within the slippage margin of the total), and what was paid beyond the new total is its
 * surplus. Nothing is ever due below zero.
 */
import { Money, compareAmounts, subtractAmounts, sumAmounts, toAmount } from './money';

export interface InvoiceBeforeRemoval {
  status: string;
  amount_paid: string;
}

export interface InvoiceAfterRemoval {
  total_amount: string;
  /** `paid` when an open invoice is now covered by what was paid; else unchanged. */
  status: string;
  /** Paid beyond the new total (`0.00` when none). */
  surplus: string;
}

const OPEN = ['pending', 'overdue'];

/** What an invoice's balance is, never below zero (an overpaid invoice has nothing due). */
export function amountDue(totalAmount: string, amountPaid: string): string {
  return compareAmounts(amountPaid, totalAmount) >= 0 ? '0.00' : subtractAmounts(totalAmount, amountPaid);
}

export function afterLinesRemoved(invoice: InvoiceBeforeRemoval, keptAmounts: readonly string[], slippage: string): InvoiceAfterRemoval {
  const total = sumAmounts(keptAmounts);
  const paid = invoice.amount_paid;
  const surplus = compareAmounts(paid, total) > 0 ? subtractAmounts(paid, total) : '0.00';
  // Only what payments cover: an unpaid invoice left with no lines stays open, as one created empty does.
  const covered = compareAmounts(paid, '0.00') > 0 && new Money(amountDue(total, paid)).lte(new Money(total).times(slippage));
  return { total_amount: total, status: covered && OPEN.includes(invoice.status) ? 'paid' : invoice.status, surplus };
}

/** A crypto allocation as an invoice records it; `released_amount`: what went back to its transaction as credit (all releases together). */
export interface ReleasableEntry {
  id: string;
  transaction_id: string;
  amount_applied: string;
  released_amount?: string | null;
}

/**
 * Gives `surplus` back from an invoice's crypto allocations, newest first (the last payments
 * are the ones the lower total no longer needed): each reduced entry's `amount_applied` goes
 * down and its `released_amount` up by the same. Never more than the entries hold; `released`
 * is what was taken (the invoice's `amount_paid` goes down by it). Order and other fields kept.
 */
export function releaseSurplus<E extends ReleasableEntry>(entries: readonly E[], surplus: string): { entries: E[]; released: string } {
  let left = new Money(surplus);
  const out = entries.map((e) => ({ ...e }));
  for (let i = out.length - 1; i >= 0 && left.gt(0); i--) {
    const applied = new Money(out[i].amount_applied);
    const take = applied.lt(left) ? applied : left;
    if (take.lte(0)) continue;
    out[i].amount_applied = subtractAmounts(out[i].amount_applied, toAmount(take));
    out[i].released_amount = sumAmounts([out[i].released_amount ?? '0.00', toAmount(take)]);
    left = left.minus(take);
  }
  return { entries: out, released: subtractAmounts(surplus, toAmount(left)) };
}

/** A transaction's own record of an allocation. */
export interface TransactionEntry {
  _id: string;
  amount_applied: string;
  released_amount?: string | null;
}

/**
 * A transaction's allocations after an invoice released part of them: each entry the invoice
 * lists (by id) takes the invoice's `amount_applied` and `released_amount`, and the credit
 * (`unallocated_amount`) rises by what the entry lost. Copies state, so applying it again
 * (a replay) finds every entry equal and changes nothing (`credited` 0.00). An entry the
 * invoice shows higher than the transaction is left alone (no release lowers an invoice entry
 * below the transaction's, so that is not a release).
 */
export function creditReleased<T extends TransactionEntry>(
  allocations: readonly T[],
  unallocated: string,
  invoiceEntries: readonly ReleasableEntry[],
): { allocations: T[]; unallocated_amount: string; credited: string } {
  const byId = new Map(invoiceEntries.map((e) => [e.id, e]));
  let credited = new Money(0);
  const out = allocations.map((a) => {
    const inv = byId.get(a._id);
    if (!inv || compareAmounts(inv.amount_applied, a.amount_applied) >= 0) return a;
    credited = credited.plus(subtractAmounts(a.amount_applied, inv.amount_applied));
    return { ...a, amount_applied: inv.amount_applied, released_amount: inv.released_amount ?? null };
  });
  return { allocations: out, unallocated_amount: sumAmounts([unallocated, toAmount(credited)]), credited: toAmount(credited) };
}
