/**
 * What settles one invoice (pure). A payment to a customer's own address pays the customer's
 * open invoices oldest first (allocation.ts, `customer` mode), so an invoice is settled only once
 * every open invoice before it in that order is: the amount to ask is its balance plus theirs.
 */
import { OpenInvoice, orderInvoices } from './allocation';
import { sumAmounts, compareAmounts } from '../billing/money';

export interface Settlement<T extends OpenInvoice> {
  /** The open invoices a payment settles before `target` (allocation order), each with a balance. */
  earlier: T[];
  /** `target`'s balance plus theirs (two decimals); `0.00` when `target` has nothing due. */
  amount: string;
}

/** `open`: the customer's open invoices (`target` among them or not); those with no balance are passed over, as allocation does. */
export function settlementOf<T extends OpenInvoice>(open: readonly T[], target: T): Settlement<T> {
  if (compareAmounts(target.balance, '0.00') <= 0) return { earlier: [], amount: '0.00' };
  const ordered = orderInvoices([...open.filter((i) => i.id !== target.id && compareAmounts(i.balance, '0.00') > 0), target]);
  const earlier = ordered.slice(0, ordered.indexOf(target));
  return { earlier, amount: sumAmounts([...earlier, target].map((i) => i.balance)) };
}
