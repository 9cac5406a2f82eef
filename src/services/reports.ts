/**
 * Finance reports of one account and scope: MRR and its movements, receivables aging, and
 * collections. Each report reads each collection it needs once, filtered by account and scope
 * (FerretDB pushes `account_id` down) with a projection, and hands the rows to the pure modules
 * of src/billing/. An account may hold 100,000 invoices: no per-row queries.
 */
import { Subscription, CanceledSubscription } from '../models/subscription';
import { Invoice } from '../models/invoice';
import { CryptoTransaction } from '../models/cryptoTransaction';
import { Scope, scopeFilter } from '../models/scope';
import { ApiError } from '../lib/errors';
import { isCalendarDate } from '../billing/dueDate';
import { addMonths, isMonth, Month, monthOf, monthsBetween, mrrReport, MrrSubscription } from '../billing/mrr';
import { ageInvoices, OpenInvoice } from '../billing/receivables';
import { collectionsReport, CollectedTransaction, MarkedPaidInvoice } from '../billing/collections';

/** At most ten years of months in one report (bounded work per request). */
export const MAX_REPORT_MONTHS = 120;

export interface MonthRange {
  from?: string;
  to?: string;
}

/** `from`..`to`, both optional: the 12 months ending with the current one by default. */
export function resolveMonths(range: MonthRange, now: Date): { from: Month; to: Month } {
  for (const param of ['from', 'to'] as const) {
    const v = range[param];
    if (v !== undefined && !isMonth(v)) throw ApiError.invalid(`${param} must be a month (YYYY-MM)`, param);
  }
  const to = range.to ?? (range.from ? addMonths(range.from, 11) : monthOf(now));
  const from = range.from ?? addMonths(to, -11);
  if (from > to) throw ApiError.invalid('from must not be after to', 'from');
  if (monthsBetween(from, to).length > MAX_REPORT_MONTHS) throw ApiError.invalid(`At most ${MAX_REPORT_MONTHS} months in one report`, 'to');
  return { from, to };
}

const PHASES_PROJECTION = { customer_id: 1, canceled_at: 1, phases: 1 } as const;

/** Every subscription of the scope that can have had MRR: live ones and those canceled (deleted) since. */
export async function loadMrrSubscriptions(scope: Scope): Promise<MrrSubscription[]> {
  const [live, canceled] = await Promise.all([
    Subscription.find(scopeFilter(scope), PHASES_PROJECTION).lean<RawSubscription[]>(),
    CanceledSubscription.find(scopeFilter(scope), PHASES_PROJECTION).lean<RawSubscription[]>(),
  ]);
  const seen = new Set<string>();
  const out: MrrSubscription[] = [];
  // A subscription caught between its archive copy and its delete is in both: counted once.
  for (const s of [...live, ...canceled]) {
    if (seen.has(s._id)) continue;
    seen.add(s._id);
    out.push(toMrrSubscription(s));
  }
  return out;
}

/** A stored subscription (live or kept after cancellation) as the MRR maths reads it. */
export function toMrrSubscription(s: RawSubscription): MrrSubscription {
  return {
    id: s._id,
    customer_id: s.customer_id,
    canceled_at: s.canceled_at ? new Date(s.canceled_at) : null,
    phases: (s.phases ?? []).map((p) => ({
      start_date: new Date(p.start_date),
      end_date: p.end_date ? new Date(p.end_date) : null,
      items: p.items ?? [],
    })),
  };
}

export interface RawSubscription {
  _id: string;
  customer_id: string;
  canceled_at?: Date | null;
  phases?: { start_date: Date; end_date?: Date | null; items?: MrrSubscription['phases'][number]['items'] }[];
}

/** `subs` when the caller already loaded them (the console's overview also counts them). */
export async function mrr(scope: Scope, range: MonthRange, now = new Date(), subs?: MrrSubscription[]) {
  const { from, to } = resolveMonths(range, now);
  return { from, to, months: mrrReport(subs ?? (await loadMrrSubscriptions(scope)), from, to) };
}

/** `as_of` a calendar day, today (UTC) by default. */
export function resolveAsOf(asOf: string | undefined, now: Date): string {
  if (asOf === undefined) return now.toISOString().slice(0, 10);
  if (!isCalendarDate(asOf)) throw ApiError.invalid('as_of must be a date (YYYY-MM-DD)', 'as_of');
  return asOf;
}

const INVOICE_PROJECTION = { customer_id: 1, status: 1, due_date: 1, total_amount: 1, amount_paid: 1, created_at: 1 } as const;

/**
 * Open invoices (pending and overdue) created by the end of `as_of`, aged on that day. Statuses
 * are today's: an invoice paid since `as_of` is not shown as open then (no status history is kept).
 */
export async function receivables(scope: Scope, query: { as_of?: string }, now = new Date()) {
  const asOf = resolveAsOf(query.as_of, now);
  const end = Date.parse(`${asOf}T00:00:00Z`) + 86_400_000;
  // Two equality queries rather than `$in`, which FerretDB would answer by decoding the collection.
  const [pending, overdue] = await Promise.all(
    (['pending', 'overdue'] as const).map((status) => Invoice.find({ ...scopeFilter(scope), status }, INVOICE_PROJECTION).lean<(OpenInvoice & { _id: string; created_at: Date })[]>()),
  );
  const open = [...pending, ...overdue]
    .filter((i) => new Date(i.created_at).getTime() < end)
    .map((i) => ({ id: i._id, customer_id: i.customer_id, status: i.status, due_date: i.due_date, total_amount: i.total_amount, amount_paid: i.amount_paid ?? '0.00' }));
  return { asOf, aging: ageInvoices(open, asOf) };
}

const TRANSACTION_PROJECTION = {
  customer_id: 1, currency: 1, amount: 1, transaction_source: 1, timestamp: 1, usd_value: 1, unallocated_amount: 1, allocations: 1,
} as const;

export async function collections(scope: Scope, range: MonthRange, now = new Date()) {
  const { from, to } = resolveMonths(range, now);
  const [transactions, paid] = await Promise.all([
    CryptoTransaction.find(scopeFilter(scope), TRANSACTION_PROJECTION).lean<CollectedTransaction[]>(),
    // Only invoices paid with nothing applied count (see collectionsReport): an equality FerretDB
    // pushes down, so the many invoices paid by crypto are never read.
    Invoice.find({ ...scopeFilter(scope), status: 'paid', amount_paid: '0.00' }, { total_amount: 1, amount_paid: 1, updated_at: 1 }).lean<{ total_amount: string; amount_paid?: string; updated_at: Date }[]>(),
  ]);
  // A paid invoice is not written again, so its last update is when it was marked paid.
  const markedPaid: MarkedPaidInvoice[] = paid.map((i) => ({ paid_at: new Date(i.updated_at), total_amount: i.total_amount, amount_paid: i.amount_paid ?? '0.00' }));
  const normalized = transactions.map((t) => ({ ...t, customer_id: t.customer_id ?? null, timestamp: new Date(t.timestamp), allocations: t.allocations ?? [] }));
  return { from, to, result: collectionsReport(normalized, markedPaid, monthsBetween(from, to)) };
}
