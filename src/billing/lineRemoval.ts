/**
 * An invoice after some of its line items went (a deleted price takes its lines with it, spec
 * cascade table). Payments already applied stay applied, so the new total may fall to or below
 * what was paid: such an open invoice is settled as paid (by the allocation's rule: what is left
 * is within the slippage margin of the total), and what was paid beyond the new total is its
 * surplus. Nothing is ever due below zero.
 */
import { Money, compareAmounts, subtractAmounts, sumAmounts } from './money';

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
