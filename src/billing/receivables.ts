/**
 * Receivables aging: open invoices (pending or overdue) by days past their due date on a given
 * day. Pure: the caller passes the invoices and the day.
 */
import { Money, toAmount } from './money';

export const AGING_BUCKETS = ['current', '1_30', '31_60', '61_90', 'over_90'] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

export const AGING_LABELS: Record<AgingBucket, string> = {
  current: 'Current',
  '1_30': '1–30 days',
  '31_60': '31–60 days',
  '61_90': '61–90 days',
  over_90: 'Over 90 days',
};

export interface OpenInvoice {
  id: string;
  customer_id: string;
  status: string;
  /** YYYY-MM-DD */
  due_date: string;
  total_amount: string;
  amount_paid: string;
}

const DAY_MS = 86_400_000;

/** Whole days from the due date to `asOf` (both calendar days, UTC); 0 or less is not yet due. */
export function daysPastDue(dueDate: string, asOf: string): number {
  return Math.round((Date.parse(`${asOf}T00:00:00Z`) - Date.parse(`${dueDate}T00:00:00Z`)) / DAY_MS);
}

export function agingBucket(days: number): AgingBucket {
  if (days <= 0) return 'current';
  if (days <= 30) return '1_30';
  if (days <= 60) return '31_60';
  if (days <= 90) return '61_90';
  return 'over_90';
}

export interface AgedInvoice extends OpenInvoice {
  days_past_due: number;
  balance: string;
  bucket: AgingBucket;
}

export interface AgingReport {
  buckets: { bucket: AgingBucket; count: number; amount: string; invoices: AgedInvoice[] }[];
  total: { count: number; amount: string };
  overdue: { count: number; amount: string };
}

/** Each invoice in exactly one bucket, oldest due date first within a bucket; amounts are balances. */
export function ageInvoices(invoices: readonly OpenInvoice[], asOf: string): AgingReport {
  const aged: AgedInvoice[] = invoices
    .map((inv) => {
      const days = daysPastDue(inv.due_date, asOf);
      return { ...inv, days_past_due: Math.max(days, 0), balance: toAmount(new Money(inv.total_amount).minus(inv.amount_paid || '0')), bucket: agingBucket(days) };
    })
    .sort((a, b) => (a.due_date < b.due_date ? -1 : a.due_date > b.due_date ? 1 : a.id < b.id ? -1 : 1));
  const total = (list: AgedInvoice[]) => ({ count: list.length, amount: toAmount(list.reduce((s, i) => s.plus(i.balance), new Money(0))) });
  const buckets = AGING_BUCKETS.map((bucket) => {
    const list = aged.filter((i) => i.bucket === bucket);
    return { bucket, ...total(list), invoices: list };
  });
  return { buckets, total: total(aged), overdue: total(aged.filter((i) => i.bucket !== 'current')) };
}
