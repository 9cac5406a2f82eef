/**
 * Collections: what was paid, per month and currency, from crypto transactions (at the USD value
 * they were allocated at) and invoices marked paid by hand. Pure.
 */
import { Money, toAmount } from './money';
import { monthOf, type Month } from './mrr';

/** How the money came in: on chain (detected), entered by hand (or an approved claim), or an invoice marked paid. */
export const COLLECTION_SOURCES = ['blockchain', 'manual_entry', 'invoice_marked_paid'] as const;
export type CollectionSource = (typeof COLLECTION_SOURCES)[number];

export interface CollectedTransaction {
  customer_id: string | null;
  currency: string;
  amount: string;
  transaction_source: 'blockchain' | 'manual_entry';
  timestamp: Date;
  usd_value: string | null;
  unallocated_amount: string | null;
  allocations: { amount_applied: string }[];
}

/**
 * An invoice set to `paid` by hand with nothing applied to it by crypto: it was paid outside the
 * service. (One paid in part by crypto and then marked paid is not counted: crypto pays within a
 * slippage margin, so the rest cannot be told from a rounding gap.)
 */
export interface MarkedPaidInvoice {
  paid_at: Date;
  total_amount: string;
  amount_paid: string;
}

export interface CollectionRow {
  month: Month;
  currency: string;
  source: CollectionSource;
  manual: boolean;
  payments: number;
  /** In the currency's own units (coins; USD for invoices marked paid). */
  amount: string;
  usd_value: string;
  allocated_usd: string;
  unallocated_usd: string;
}

export interface CollectionsResult {
  rows: CollectionRow[];
  /** Per month, every currency together in USD. */
  months: { month: Month; usd_value: string; payments: number }[];
  /** Credit left on transactions (all time), per customer; `null` customer is the account wallet. */
  unallocated_credit: { customer_id: string | null; amount: string; transactions: number }[];
}

type Acc = { payments: number; amount: ReturnType<typeof zero>; usd: ReturnType<typeof zero>; allocated: ReturnType<typeof zero>; unallocated: ReturnType<typeof zero> };
const zero = () => new Money(0);

export function collectionsReport(
  transactions: readonly CollectedTransaction[],
  markedPaid: readonly MarkedPaidInvoice[],
  months: readonly Month[],
): CollectionsResult {
  const inRange = new Set(months);
  const cells = new Map<string, Acc>();
  const cell = (month: Month, currency: string, source: CollectionSource) => {
    const key = `${month}|${currency}|${source}`;
    let c = cells.get(key);
    if (!c) cells.set(key, (c = { payments: 0, amount: zero(), usd: zero(), allocated: zero(), unallocated: zero() }));
    return c;
  };
  const credit = new Map<string | null, { amount: ReturnType<typeof zero>; transactions: number }>();

  for (const t of transactions) {
    const allocated = t.allocations.reduce((s, a) => s.plus(a.amount_applied), zero());
    // Until it is priced and allocated, a transaction's credit is unknown; it counts once it is.
    const unallocated = t.unallocated_amount === null ? zero() : new Money(t.unallocated_amount);
    if (unallocated.gt(0)) {
      const c = credit.get(t.customer_id) ?? { amount: zero(), transactions: 0 };
      c.amount = c.amount.plus(unallocated);
      c.transactions += 1;
      credit.set(t.customer_id, c);
    }
    const month = monthOf(t.timestamp);
    if (!inRange.has(month)) continue;
    const c = cell(month, t.currency, t.transaction_source);
    c.payments += 1;
    c.amount = c.amount.plus(t.amount);
    c.usd = c.usd.plus(t.usd_value ?? 0);
    c.allocated = c.allocated.plus(allocated);
    c.unallocated = c.unallocated.plus(unallocated);
  }
  for (const inv of markedPaid) {
    const month = monthOf(inv.paid_at);
    const outside = new Money(inv.total_amount);
    if (!inRange.has(month) || outside.lte(0) || !new Money(inv.amount_paid || '0').isZero()) continue;
    const c = cell(month, 'USD', 'invoice_marked_paid');
    c.payments += 1;
    c.amount = c.amount.plus(outside);
    c.usd = c.usd.plus(outside);
    c.allocated = c.allocated.plus(outside);
  }

  const rows: CollectionRow[] = [...cells.entries()].map(([key, c]) => {
    const [month, currency, source] = key.split('|') as [Month, string, CollectionSource];
    return {
      month,
      currency,
      source,
      manual: source !== 'blockchain',
      payments: c.payments,
      amount: source === 'invoice_marked_paid' ? toAmount(c.amount) : c.amount.toFixed(),
      usd_value: toAmount(c.usd),
      allocated_usd: toAmount(c.allocated),
      unallocated_usd: toAmount(c.unallocated),
    };
  });
  return summarizeCollections(
    rows,
    months,
    [...credit.entries()].map(([customer_id, c]) => ({ customer_id, amount: toAmount(c.amount), transactions: c.transactions })),
  );
}

/**
 * The result from its rows (one per month, currency and source) and the credit per customer:
 * rows in order, the per-month totals, the credit in customer order. Shared by the live report
 * and the one read from rollups (src/billing/rollups.ts), so both give the same answer.
 */
export function summarizeCollections(
  rows: readonly CollectionRow[],
  months: readonly Month[],
  credit: CollectionsResult['unallocated_credit'],
): CollectionsResult {
  const sorted = [...rows].sort((a, b) => (a.month + a.currency + a.source < b.month + b.currency + b.source ? -1 : 1));
  return {
    rows: sorted,
    months: months.map((month) => {
      const of = sorted.filter((r) => r.month === month);
      return { month, usd_value: toAmount(of.reduce((s, r) => s.plus(r.usd_value), zero())), payments: of.reduce((n, r) => n + r.payments, 0) };
    }),
    unallocated_credit: [...credit].sort((a, b) => (String(a.customer_id) < String(b.customer_id) ? -1 : 1)),
  };
}
