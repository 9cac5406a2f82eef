/**
 * Finance reports of one account and scope: MRR and its movements, receivables aging, and
 * collections. MRR and collections read their rollup (a few small documents) when it is current,
 * and otherwise every source document once (src/services/reports/reportSources.ts); receivables read the
 * open invoices (two pushed-down equalities). The maths is in the pure modules of src/billing/.
 * An account may hold 100,000 invoices: no per-row queries.
 */
import { Invoice } from '../../models/invoice';
import { Scope, scopeFilter } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { isCalendarDate } from '../../billing/dueDate';
import { addMonths, isMonth, Month, monthOf, monthsBetween, mrrReport, MrrSubscription, phaseAt } from '../../billing/mrr';
import { ageInvoices } from '../../billing/receivables';
import { collectionsReport } from '../../billing/collections';
import { agingTotalsFromRollup, AgingTotals, collectionsFromRollup, inForceFromRollup, mrrFromRollup, MrrRollupMonth } from '../../billing/rollups';
import { loadCollectionsSource, loadMrrSubscriptions, loadOpenInvoices } from './reportSources';
import { readCollectionsRollup, readMrrRollup, readReceivablesRollup } from './reportRollups';

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

/**
 * Open invoices (pending and overdue) created by the end of `as_of`, aged on that day. Statuses
 * are today's: an invoice paid since `as_of` is not shown as open then (no status history is kept).
 */
export async function receivables(scope: Scope, query: { as_of?: string }, now = new Date()) {
  const asOf = resolveAsOf(query.as_of, now);
  const end = Date.parse(`${asOf}T00:00:00Z`) + 86_400_000;
  // From the rollup's copy of the open invoices when current, else from the invoices themselves.
  const rollup = await readReceivablesRollup(scope);
  const all = rollup ? rollup.invoices : (await loadOpenInvoices(scope)).map((i) => ({ ...i, created_at: i.created_at.getTime() }));
  const open = all.filter((i) => i.created_at < end).map(({ created_at: _, ...i }) => i);
  return { asOf, aging: ageInvoices(open, asOf) };
}

/** The aging's counts and amounts today (the console's overview): from the rollup when current, else live. */
export async function receivablesTotals(scope: Scope, now = new Date()): Promise<AgingTotals> {
  const asOf = resolveAsOf(undefined, now);
  const rollup = await readReceivablesRollup(scope);
  if (rollup) return agingTotalsFromRollup(rollup.groups, asOf);
  const { aging } = await receivables(scope, {}, now);
  return { buckets: aging.buckets.map(({ invoices: _, ...b }) => b), total: aging.total, overdue: aging.overdue };
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
