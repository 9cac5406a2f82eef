/**
 * The reports as the API renders them: JSON objects (schemas in ./schemas.ts) and their CSV
 * forms. Money is two-decimal USD strings; MRR movements are signed (contraction and churn
 * are negative), so `starting_mrr` plus the movements is `mrr`.
 */
import { centsToAmount } from '../billing/money';
import type { MrrMonthCents } from '../billing/mrr';
import { AGING_LABELS, AgingReport } from '../billing/receivables';
import type { CollectionsResult } from '../billing/collections';
import { toCsv } from '../lib/csv';

/** Each JSON bucket lists at most this many invoices (oldest first); the CSV has them all. */
export const MAX_BUCKET_INVOICES = 1000;

export function presentMrrReport(from: string, to: string, months: MrrMonthCents[]) {
  return {
    object: 'mrr_report' as const,
    currency: 'USD',
    from,
    to,
    months: months.map((m) => ({
      month: m.month,
      starting_mrr: centsToAmount(m.startingCents),
      mrr: centsToAmount(m.mrrCents),
      arr: centsToAmount(m.mrrCents * 12),
      new_mrr: centsToAmount(m.newCents),
      expansion_mrr: centsToAmount(m.expansionCents),
      contraction_mrr: centsToAmount(m.contractionCents),
      churned_mrr: centsToAmount(m.churnedCents),
      net_new_mrr: centsToAmount(m.newCents + m.expansionCents + m.contractionCents + m.churnedCents),
      active_subscriptions: m.activeSubscriptions,
      new_subscriptions: m.newSubscriptions,
      churned_subscriptions: m.churnedSubscriptions,
    })),
  };
}
export type MrrReport = ReturnType<typeof presentMrrReport>;

export function mrrCsv(r: MrrReport): string {
  const cols = ['month', 'starting_mrr', 'new_mrr', 'expansion_mrr', 'contraction_mrr', 'churned_mrr', 'net_new_mrr', 'mrr', 'arr', 'active_subscriptions', 'new_subscriptions', 'churned_subscriptions'] as const;
  return toCsv(cols, r.months.map((m) => cols.map((c) => m[c])));
}

export function presentReceivables(asOf: string, aging: AgingReport, maxInvoices = MAX_BUCKET_INVOICES) {
  return {
    object: 'receivables_report' as const,
    currency: 'USD',
    as_of: asOf,
    total: aging.total,
    overdue: aging.overdue,
    buckets: aging.buckets.map((b) => ({
      bucket: b.bucket,
      label: AGING_LABELS[b.bucket],
      count: b.count,
      amount: b.amount,
      invoices: b.invoices.slice(0, maxInvoices).map(({ bucket: _bucket, ...inv }) => inv),
      invoices_truncated: b.invoices.length > maxInvoices,
    })),
  };
}
export type ReceivablesReport = ReturnType<typeof presentReceivables>;

/** One row per open invoice, with its bucket. Built from the aging itself so nothing is cut. */
export function receivablesCsv(asOf: string, aging: AgingReport): string {
  const rows = aging.buckets.flatMap((b) =>
    b.invoices.map((i) => [asOf, b.bucket, i.id, i.customer_id, i.status, i.due_date, i.days_past_due, i.total_amount, i.amount_paid, i.balance]),
  );
  return toCsv(['as_of', 'bucket', 'invoice_id', 'customer_id', 'status', 'due_date', 'days_past_due', 'total_amount', 'amount_paid', 'balance'], rows);
}

export function presentCollections(from: string, to: string, c: CollectionsResult) {
  return { object: 'collections_report' as const, from, to, rows: c.rows, months: c.months, unallocated_credit: c.unallocated_credit };
}
export type CollectionsReport = ReturnType<typeof presentCollections>;

export function collectionsCsv(r: CollectionsReport): string {
  const cols = ['month', 'currency', 'source', 'manual', 'payments', 'amount', 'usd_value', 'allocated_usd', 'unallocated_usd'] as const;
  return toCsv(cols, r.rows.map((row) => cols.map((c) => row[c])));
}
