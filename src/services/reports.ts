/**
 * Finance reports of one account and scope: MRR and its movements, receivables aging, and
 * collections. MRR and collections read their rollup (a few small documents) when it is current,
 * and otherwise every source document once (src/services/reportSources.ts); receivables read the
 * open invoices (two pushed-down equalities). The maths is in the pure modules of src/billing/.
 * An account may hold 100,000 invoices: no per-row queries.
 */
import { Invoice } from '../models/invoice';
import { Scope, scopeFilter } from '../models/scope';
import { ApiError } from '../lib/errors';
import { isCalendarDate } from '../billing/dueDate';
import { addMonths, isMonth, Month, monthOf, monthsBetween, mrrReport, MrrSubscription, phaseAt } from '../billing/mrr';
import { ageInvoices, OpenInvoice } from '../billing/receivables';
import { collectionsReport } from '../billing/collections';
import { collectionsFromRollup, inForceFromRollup, mrrFromRollup, MrrRollupMonth } from '../billing/rollups';
import { loadCollectionsSource, loadMrrSubscriptions } from './reportSources';
import { readCollectionsRollup, readMrrRollup } from './reportRollups';

export { loadMrrSubscriptions, toMrrSubscription, type RawSubscription } from './reportSources';

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

/** What the MRR figures are computed from: the current rollup, or (none current) every subscription. */
export type MrrSource = { rollup: MrrRollupMonth[] } | { subs: MrrSubscription[] };

export async function loadMrrSource(scope: Scope): Promise<MrrSource> {
  const rollup = await readMrrRollup(scope);
  return rollup ? { rollup } : { subs: await loadMrrSubscriptions(scope) };
}

/** Subscriptions with a phase in force at `t` (a free phase included). */
export function inForceAt(source: MrrSource, t: Date): number {
  return 'rollup' in source ? inForceFromRollup(source.rollup, t) : source.subs.filter((s) => phaseAt(s, t) !== null).length;
}

/** `source` when the caller already loaded it (the console's overview also counts from it). */
export async function mrr(scope: Scope, range: MonthRange, now = new Date(), source?: MrrSource) {
  const { from, to } = resolveMonths(range, now);
  const src = source ?? (await loadMrrSource(scope));
  return { from, to, months: 'rollup' in src ? mrrFromRollup(src.rollup, from, to) : mrrReport(src.subs, from, to) };
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

/**
 * Collections, from the rollup when it is current (see reportRollups), else from every
 * transaction and invoice marked paid of the scope: the same answer either way.
 */
export async function collections(scope: Scope, range: MonthRange, now = new Date()) {
  const { from, to } = resolveMonths(range, now);
  const months = monthsBetween(from, to);
  const rollup = await readCollectionsRollup(scope);
  if (rollup) return { from, to, result: collectionsFromRollup(rollup, months) };
  const { transactions, markedPaid } = await loadCollectionsSource(scope);
  return { from, to, result: collectionsReport(transactions, markedPaid, months) };
}
