/**
 * Report rollups: what the MRR and collections reports need, precomputed from every source
 * document of an account and scope, so a report reads a few small documents instead of every
 * subscription and transaction. Pure: no I/O, no clock. A rollup is a function of the source
 * documents alone (rebuilding it from the same documents gives the same rollup), and reading a
 * report from it gives exactly what the live computation gives (property tests in
 * test/billing/rollups.test.ts).
 */
import { addMonths, monthEnd, monthOf, Month, MrrMonthCents, MrrSubscription, movementOf, phaseAt, subscriptionMrrCents } from './mrr';
import { CollectedTransaction, collectionsReport, CollectionsResult, MarkedPaidInvoice, summarizeCollections } from './collections';
import { AGING_BUCKETS, agingBucket, AgingBucket, AgingReport, daysPastDue, OpenInvoice } from './receivables';
import { Money, toAmount } from './money';

/**
 * One month in which some subscription's value changes: a phase starts or ends, or it is
 * canceled. Between two such months nothing moves: MRR and the counts carry over and the
 * movements are zero, so only these months are stored.
 */
export interface MrrRollupMonth extends MrrMonthCents {
  /** Subscriptions with a phase in force (free ones included) at the first instant of the month. */
  inForceAtStart: number;
  /** Changes of that count within the month, by instant (ms); objects, as FerretDB v1 stores no nested arrays. */
  inForceChanges: { at: number; delta: number }[];
}

/** The instants at which a subscription's phase in force (and so its value) can change. */
function changeInstants(sub: MrrSubscription): number[] {
  const out = new Set<number>();
  for (const p of sub.phases) {
    out.add(p.start_date.getTime());
    if (p.end_date) out.add(p.end_date.getTime());
  }
  if (sub.canceled_at) out.add(sub.canceled_at.getTime());
  return [...out].filter((t) => Number.isFinite(t)).sort((a, b) => a - b);
}

/**
 * The sparse MRR rollup: one row per month in which an instant of change falls, in month order.
 * A subscription's value at a month end differs from the one a month before only if an instant
 * of change falls in that month (start inclusive, end exclusive, canceled from `canceled_at`:
 * the value at `t` depends only on which instants are `<= t`), so the rows are the months where
 * anything can move. Work: O(instants), not O(subscriptions x months).
 */
export function mrrRollup(subs: readonly MrrSubscription[]): MrrRollupMonth[] {
  type Acc = { mrrDelta: number; new: number; expansion: number; contraction: number; churned: number; activeDelta: number; newSubs: number; churnedSubs: number; inForce: Map<number, number> };
  const acc = new Map<Month, Acc>();
  const at = (m: Month) => {
    let a = acc.get(m);
    if (!a) acc.set(m, (a = { mrrDelta: 0, new: 0, expansion: 0, contraction: 0, churned: 0, activeDelta: 0, newSubs: 0, churnedSubs: 0, inForce: new Map() }));
    return a;
  };
  for (const sub of subs) {
    const instants = changeInstants(sub);
    // Phase in force, instant by instant (constant from one instant to the next).
    let inForce = false;
    for (const t of instants) {
      const now = phaseAt(sub, new Date(t)) !== null;
      if (now !== inForce) {
        const a = at(monthOf(new Date(t)));
        a.inForce.set(t, (a.inForce.get(t) ?? 0) + (now ? 1 : -1));
        inForce = now;
      }
    }
    // Value at each month end where an instant falls (0 before the first instant).
    let before = 0;
    for (const month of [...new Set(instants.map((t) => monthOf(new Date(t))))]) {
      const after = subscriptionMrrCents(sub, monthEnd(month));
      const a = at(month);
      const delta = after - before;
      switch (movementOf(before, after)) {
        case 'new':
          a.new += delta;
          a.newSubs += 1;
          break;
        case 'churned':
          a.churned += delta;
          a.churnedSubs += 1;
          break;
        case 'expansion':
          a.expansion += delta;
          break;
        case 'contraction':
          a.contraction += delta;
          break;
        default:
          break;
      }
      a.mrrDelta += delta;
      a.activeDelta += (after > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
      before = after;
    }
  }
  let mrr = 0;
  let active = 0;
  let inForce = 0;
  return [...acc.keys()].sort().map((month) => {
    const a = acc.get(month)!;
    const changes = [...a.inForce.entries()].filter(([, n]) => n !== 0).sort((x, y) => x[0] - y[0]).map(([at, delta]) => ({ at, delta }));
    const row: MrrRollupMonth = {
      month,
      startingCents: mrr,
      mrrCents: mrr + a.mrrDelta,
      newCents: a.new,
      expansionCents: a.expansion,
      contractionCents: a.contraction,
      churnedCents: a.churned,
      activeSubscriptions: active + a.activeDelta,
      newSubscriptions: a.newSubs,
      churnedSubscriptions: a.churnedSubs,
      inForceAtStart: inForce,
      inForceChanges: changes,
    };
    mrr = row.mrrCents;
    active = row.activeSubscriptions;
    inForce += changes.reduce((s, c) => s + c.delta, 0);
    return row;
  });
}

/** The latest row at or before `month` (rows in month order), if any. */
function rowAtOrBefore<R extends { month: Month }>(rows: readonly R[], month: Month): R | null {
  let found: R | null = null;
  for (const r of rows) {
    if (r.month > month) break;
    found = r;
  }
  return found;
}

/** The MRR report `from`..`to` from a rollup: exactly `mrrReport` over the subscriptions it was built from. */
export function mrrFromRollup(rows: readonly MrrRollupMonth[], from: Month, to: Month): MrrMonthCents[] {
  const out: MrrMonthCents[] = [];
  let carried = rowAtOrBefore(rows, addMonths(from, -1));
  let mrr = carried?.mrrCents ?? 0;
  let active = carried?.activeSubscriptions ?? 0;
  const byMonth = new Map(rows.map((r) => [r.month, r]));
  for (let month = from; month <= to; month = addMonths(month, 1)) {
    const r = byMonth.get(month);
    if (r) {
      out.push({
        month,
        startingCents: r.startingCents,
        mrrCents: r.mrrCents,
        newCents: r.newCents,
        expansionCents: r.expansionCents,
        contractionCents: r.contractionCents,
        churnedCents: r.churnedCents,
        activeSubscriptions: r.activeSubscriptions,
        newSubscriptions: r.newSubscriptions,
        churnedSubscriptions: r.churnedSubscriptions,
      });
      carried = r;
      mrr = r.mrrCents;
      active = r.activeSubscriptions;
    } else {
      out.push({ month, startingCents: mrr, mrrCents: mrr, newCents: 0, expansionCents: 0, contractionCents: 0, churnedCents: 0, activeSubscriptions: active, newSubscriptions: 0, churnedSubscriptions: 0 });
    }
  }
  return out;
}

/** Subscriptions with a phase in force at instant `t`, from a rollup: what counting `phaseAt(s, t) !== null` gives. */
export function inForceFromRollup(rows: readonly MrrRollupMonth[], t: Date): number {
  const r = rowAtOrBefore(rows, monthOf(t));
  if (!r) return 0;
  return r.inForceChanges.reduce((n, c) => (c.at <= t.getTime() ? n + c.delta : n), r.inForceAtStart);
}

/** One month of the collections rollup: that month's report rows. */
export interface CollectionsRollupMonth {
  month: Month;
  rows: CollectionsResult['rows'];
}

export interface CollectionsRollup {
  months: CollectionsRollupMonth[];
  unallocated_credit: CollectionsResult['unallocated_credit'];
}

/**
 * The collections rollup: the report over every month that has a payment. A row is the sum of
 * one (month, currency, source) cell, so a range's rows are the rollup rows of its months.
 */
export function collectionsRollup(transactions: readonly CollectedTransaction[], markedPaid: readonly MarkedPaidInvoice[]): CollectionsRollup {
  const months = [...new Set([...transactions.map((t) => monthOf(t.timestamp)), ...markedPaid.map((i) => monthOf(i.paid_at))])].sort();
  const full = collectionsReport(transactions, markedPaid, months);
  return {
    months: months.map((month) => ({ month, rows: full.rows.filter((r) => r.month === month) })).filter((m) => m.rows.length > 0),
    unallocated_credit: full.unallocated_credit,
  };
}

/** The collections report over `months` from a rollup: exactly `collectionsReport` over the documents it was built from. */
export function collectionsFromRollup(rollup: CollectionsRollup, months: readonly Month[]): CollectionsResult {
  const wanted = new Set(months);
  const rows = rollup.months.filter((m) => wanted.has(m.month)).flatMap((m) => m.rows);
  return summarizeCollections(rows, months, rollup.unallocated_credit);
}

/**
 * Open invoices summed per (due date, creation day): all the console's overview needs of the
 * receivables (bucket counts and amounts, totals), whatever the day it is aged on. Balances are
 * rounded to the cent per invoice before they are summed, as `ageInvoices` does.
 */
export interface ReceivablesGroup {
  due_date: string;
  /** UTC day the invoices were created (the report counts those created by the end of `as_of`). */
  created_day: string;
  count: number;
  balance: string;
}

export function receivablesRollup(invoices: readonly (OpenInvoice & { created_at: Date })[]): ReceivablesGroup[] {
  const groups = new Map<string, { due_date: string; created_day: string; count: number; balance: InstanceType<typeof Money> }>();
  for (const inv of invoices) {
    const created_day = inv.created_at.toISOString().slice(0, 10);
    const key = `${inv.due_date}|${created_day}`;
    const g = groups.get(key) ?? { due_date: inv.due_date, created_day, count: 0, balance: new Money(0) };
    g.count += 1;
    g.balance = g.balance.plus(toAmount(new Money(inv.total_amount).minus(inv.amount_paid || '0')));
    groups.set(key, g);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, g]) => ({ due_date: g.due_date, created_day: g.created_day, count: g.count, balance: g.balance.toFixed() }));
}

export type AgingTotals = Omit<AgingReport, 'buckets'> & { buckets: Omit<AgingReport['buckets'][number], 'invoices'>[] };

/** The aging's counts and amounts on `asOf` from the groups: exactly `ageInvoices` without its lists. */
export function agingTotalsFromRollup(groups: readonly ReceivablesGroup[], asOf: string): AgingTotals {
  const sums = new Map<AgingBucket, { count: number; amount: InstanceType<typeof Money> }>(AGING_BUCKETS.map((b) => [b, { count: 0, amount: new Money(0) }]));
  for (const g of groups) {
    if (g.created_day > asOf) continue;
    const s = sums.get(agingBucket(daysPastDue(g.due_date, asOf)))!;
    s.count += g.count;
    s.amount = s.amount.plus(g.balance);
  }
  const total = (bs: AgingBucket[]) => ({
    count: bs.reduce((n, b) => n + sums.get(b)!.count, 0),
    amount: toAmount(bs.reduce((s, b) => s.plus(sums.get(b)!.amount), new Money(0))),
  });
  return {
    buckets: AGING_BUCKETS.map((bucket) => ({ bucket, ...total([bucket]) })),
    total: total([...AGING_BUCKETS]),
    overdue: total(AGING_BUCKETS.filter((b) => b !== 'current')),
  };
}
