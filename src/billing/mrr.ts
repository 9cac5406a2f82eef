/**
 * Monthly recurring revenue: what a subscription's active phase is worth per month, and how the
 * total moved from one month end to the next (new, expansion, contraction, churned).
 *
 * Pure: no I/O, no clock. Amounts are computed in integer cents: each subscription's MRR is
 * rounded to the cent once, so totals and movements are exact sums of those cents and
 * "opening + movements = closing" holds to the cent.
 */
import Decimal from 'decimal.js';
import { Money, amountToCents } from './money';
import type { Interval } from './calendar';

export interface MrrItem {
  recurring: boolean;
  interval?: Interval | string | null;
  interval_count?: number | null;
  quantity: number;
  /** The price's unit amount and its override, decimal strings in major units. */
  unit_amount: string;
  overridden_price_amount?: string | null;
}

export interface MrrPhase {
  start_date: Date;
  end_date: Date | null;
  items: MrrItem[];
}

export interface MrrSubscription {
  id: string;
  customer_id: string;
  phases: MrrPhase[];
  /** Canceled subscriptions are worth nothing from this instant on. */
  canceled_at: Date | null;
}

/**
 * Steps per year, for the normalisation (yearly / 12, weekly x 52 / 12, daily x 365 / 12):
 * an item is worth price x quantity x steps / (12 x interval_count) a month. Integers only, so
 * each item is one division (not a division by a rounded 12/52 or 12/365, which put an exact
 * half cent, such as 29.97 every 2 weeks = 64.935, a hair below the half and rounded it down).
 */
const PER_YEAR: Record<Interval, number> = { day: 365, week: 52, month: 12, year: 1 };

/** One item's worth per month, unrounded (one-time items are not recurring revenue). */
function itemMonthly(item: MrrItem): Decimal {
  const interval = item.interval as Interval | null;
  if (!item.recurring || !interval || !Object.hasOwn(PER_YEAR, interval)) return new Money(0);
  const price = new Money(item.overridden_price_amount ?? item.unit_amount);
  return price.times(item.quantity).times(PER_YEAR[interval]).div(new Money(12).times(item.interval_count ?? 1));
}

/** The phase in force at instant `t` (start inclusive, end exclusive), if any. */
export function phaseAt(sub: MrrSubscription, t: Date): MrrPhase | null {
  if (sub.canceled_at && sub.canceled_at.getTime() <= t.getTime()) return null;
  return sub.phases.find((p) => p.start_date.getTime() <= t.getTime() && (p.end_date === null || t.getTime() < p.end_date.getTime())) ?? null;
}

/** A subscription's MRR at instant `t`, in cents (0 when no phase is in force). */
export function subscriptionMrrCents(sub: MrrSubscription, t: Date): number {
  const phase = phaseAt(sub, t);
  if (!phase) return 0;
  const total = phase.items.reduce((acc, i) => acc.plus(itemMonthly(i)), new Money(0));
  // Items in thirds and sixths can add up to an exact half cent that the 40-digit sum misses by
  // ~1e-38; no real sum of such fractions lies within 1e-20 of a half cent, so that much is noise.
  return amountToCents(total.toDecimalPlaces(20));
}

/** `YYYY-MM`. */
export type Month = string;

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function isMonth(s: string): boolean {
  return MONTH.test(s);
}

/** First instant of a month (UTC). */
export function monthStart(month: Month): Date {
  const m = MONTH.exec(month);
  if (!m) throw new RangeError(`not a month: ${month}`);
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1));
}

/** The last instant of a month (one millisecond before the next one starts): "at month end". */
export function monthEnd(month: Month): Date {
  return new Date(monthStart(addMonths(month, 1)).getTime() - 1);
}

export function monthOf(d: Date): Month {
  return d.toISOString().slice(0, 7);
}

export function addMonths(month: Month, n: number): Month {
  const s = monthStart(month);
  return monthOf(new Date(Date.UTC(s.getUTCFullYear(), s.getUTCMonth() + n, 1)));
}

/** Every month from `from` to `to`, both included. */
export function monthsBetween(from: Month, to: Month): Month[] {
  const out: Month[] = [];
  for (let m = from; m <= to; m = addMonths(m, 1)) out.push(m);
  return out;
}

export type Movement = 'new' | 'expansion' | 'contraction' | 'churned';

/**
 * Which movement a subscription makes between two month ends, by its MRR at each: from nothing
 * to something is new, something to nothing churned, otherwise up is expansion and down is
 * contraction; unchanged is none. Exactly one (or none) per subscription, so none counts twice.
 */
export function movementOf(beforeCents: number, afterCents: number): Movement | null {
  if (beforeCents === afterCents) return null;
  if (beforeCents === 0) return 'new';
  if (afterCents === 0) return 'churned';
  return afterCents > beforeCents ? 'expansion' : 'contraction';
}

/** One month of the report, in cents. Movements are signed: contraction and churn are negative. */
export interface MrrMonthCents {
  month: Month;
  /** MRR at the end of the month before. */
  startingCents: number;
  /** MRR at the end of this month. */
  mrrCents: number;
  newCents: number;
  expansionCents: number;
  contractionCents: number;
  churnedCents: number;
  /** Subscriptions with MRR at month end, and those that came or left during the month. */
  activeSubscriptions: number;
  newSubscriptions: number;
  churnedSubscriptions: number;
}

/** The MRR report for the months `from`..`to` over the given subscriptions. */
export function mrrReport(subs: readonly MrrSubscription[], from: Month, to: Month): MrrMonthCents[] {
  const months = monthsBetween(from, to);
  let before = subs.map((s) => subscriptionMrrCents(s, monthEnd(addMonths(from, -1))));
  return months.map((month) => {
    const after = subs.map((s) => subscriptionMrrCents(s, monthEnd(month)));
    const row: MrrMonthCents = {
      month,
      startingCents: sum(before),
      mrrCents: sum(after),
      newCents: 0,
      expansionCents: 0,
      contractionCents: 0,
      churnedCents: 0,
      activeSubscriptions: after.filter((c) => c > 0).length,
      newSubscriptions: 0,
      churnedSubscriptions: 0,
    };
    for (let i = 0; i < subs.length; i++) {
      const delta = after[i] - before[i];
      switch (movementOf(before[i], after[i])) {
        case 'new':
          row.newCents += delta;
          row.newSubscriptions += 1;
          break;
        case 'churned':
          row.churnedCents += delta;
          row.churnedSubscriptions += 1;
          break;
        case 'expansion':
          row.expansionCents += delta;
          break;
        case 'contraction':
          row.contractionCents += delta;
          break;
        default:
          break;
      }
    }
    before = after;
    return row;
  });
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
