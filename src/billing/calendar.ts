/**
 * The billing calendar: billing dates step from an anchor instant by an interval
 * (`day`, `week`, `month`, `year`) times a positive `count`
 * (docs/adr/0305-billing-calendar-and-date-limits.md). All arithmetic is in UTC and the anchor's
 * time of day is kept.
 *
 * Month and year steps clamp to the last day of shorter months but keep following the
 * anchor's day of month: from Jan 31 the dates are Jan 31, Feb 28 (Feb 29 in a leap year),
 * Mar 31, Apr 30, ... and a Feb 29 anchor bills on Feb 28 in common years. To make that
 * drift-free, the n-th billing date is always computed from the anchor ({@link billingDate}),
 * never by stepping from the previous billing date.
 *
 * Billing date n (n any integer, negative before the anchor) opens period n, which ends where
 * period n + 1 starts: periods are half-open `[start, end)`, they tile the whole time line
 * with no gap and no overlap, and every instant falls in exactly one of them.
 *
 * Day and week steps are fixed lengths (86,400,000 ms per day: UTC has no DST).
 *
 * Pure: no I/O, no clock; safe to import from Temporal workflows.
 */
export type Interval = 'day' | 'week' | 'month' | 'year';

export const INTERVALS: readonly Interval[] = ['day', 'week', 'month', 'year'];

const DAY_MS = 86_400_000;

/**
 * The longest billing interval: three years, as Stripe allows. Longer ones serve no billing
 * need and would push billing dates past what timers and dates can hold.
 */
export const MAX_INTERVAL_COUNT: Readonly<Record<Interval, number>> = { day: 1095, week: 156, month: 36, year: 3 };

/** A billing period `[start, end)`; `index` is n for the period opened by billing date n. */
export interface Period {
  start: Date;
  end: Date;
  index: number;
}

function checkCycle(interval: Interval, count: number): void {
  if (!INTERVALS.includes(interval)) throw new RangeError(`unknown interval: ${String(interval)}`);
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`interval count must be a positive integer, got ${count}`);
}

function checkDate(d: Date, name: string): void {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw new RangeError(`${name} is not a valid date`);
}

/** Days in a month (0-based month) of a UTC year; years 0-99 are not shifted to 19xx. */
export function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month + 1, 0);
  return d.getUTCDate();
}

/** Moves `date` by `months` calendar months, on day min(dayOfMonth, last day of that month). */
function shiftMonths(date: Date, months: number, dayOfMonth: number): Date {
  const total = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const out = new Date(date.getTime());
  // Day 1 first, so that setting the month never overflows into the following one.
  out.setUTCFullYear(year, month, 1);
  out.setUTCDate(Math.min(dayOfMonth, daysInMonth(year, month)));
  return out;
}

/**
 * `date` moved by `steps` intervals (`steps` any integer; negative moves back), in UTC with
 * the time of day kept. Day and week steps add fixed lengths. Month and year steps land on
 * day `anchorDay` of the target month, clamped to its last day; `anchorDay` defaults to the
 * day of month of `date`. Passing the anchor's day when stepping from an already-clamped date
 * lets iterative stepping follow the anchor: `addInterval(Feb 28, 'month', 1, 31)` is Mar 31.
 * Prefer {@link billingDate}, which always steps from the anchor itself.
 */
export function addInterval(date: Date, interval: Interval, steps: number, anchorDay?: number): Date {
  checkDate(date, 'date');
  if (!INTERVALS.includes(interval)) throw new RangeError(`unknown interval: ${String(interval)}`);
  if (!Number.isSafeInteger(steps)) throw new RangeError(`steps must be an integer, got ${steps}`);
  if (anchorDay !== undefined && (!Number.isInteger(anchorDay) || anchorDay < 1 || anchorDay > 31)) {
    throw new RangeError(`anchorDay must be 1..31, got ${anchorDay}`);
  }
  switch (interval) {
    case 'day':
      return new Date(date.getTime() + steps * DAY_MS);
    case 'week':
      return new Date(date.getTime() + steps * 7 * DAY_MS);
    case 'month':
      return shiftMonths(date, steps, anchorDay ?? date.getUTCDate());
    case 'year':
      return shiftMonths(date, steps * 12, anchorDay ?? date.getUTCDate());
  }
}

/**
 * The n-th billing date of the calendar (n any integer; 0 is the anchor itself, negative n
 * lie before it): the anchor moved by n x count intervals, computed from the anchor each time
 * so month-end clamping never drifts.
 */
export function billingDate(anchor: Date, interval: Interval, count: number, n: number): Date {
  checkCycle(interval, count);
  if (!Number.isSafeInteger(n)) throw new RangeError(`n must be an integer, got ${n}`);
  return addInterval(anchor, interval, n * count);
}

const MAX_CORRECTIONS = 8;

function approxLengthMs(interval: Interval, count: number): number {
  const days = { day: 1, week: 7, month: 30.436875, year: 365.2425 }[interval];
  return days * count * DAY_MS;
}

/** The index n with billingDate(n) <= t < billingDate(n + 1). */
export function periodIndexAt(anchor: Date, interval: Interval, count: number, t: Date): number {
  checkCycle(interval, count);
  checkDate(anchor, 'anchor');
  checkDate(t, 't');
  // An estimate from the average period length (exact for days and weeks; months and years
  // vary around the Gregorian mean by a few days), then corrected by at most a step or two.
  let n = Math.floor((t.getTime() - anchor.getTime()) / approxLengthMs(interval, count));
  for (let step = 0; step < MAX_CORRECTIONS; step++) {
    if (billingDate(anchor, interval, count, n).getTime() > t.getTime()) n -= 1;
    else if (billingDate(anchor, interval, count, n + 1).getTime() <= t.getTime()) n += 1;
    else return n;
  }
  throw new RangeError(`no billing period found for ${t.toISOString()}`);
}

/** The billing period containing t: `start <= t < end`. */
export function periodContaining(anchor: Date, interval: Interval, count: number, t: Date): Period {
  const index = periodIndexAt(anchor, interval, count, t);
  return { index, start: billingDate(anchor, interval, count, index), end: billingDate(anchor, interval, count, index + 1) };
}

/** The first billing date strictly after `after`. */
export function nextBillingDate(anchor: Date, interval: Interval, count: number, after: Date): Date {
  return periodContaining(anchor, interval, count, after).end;
}

/** The first billing date at or after `t` (t itself when it is a billing date). */
export function billingDateOnOrAfter(anchor: Date, interval: Interval, count: number, t: Date): Date {
  const p = periodContaining(anchor, interval, count, t);
  return p.start.getTime() === t.getTime() ? p.start : p.end;
}

/** True when t is exactly a billing date of the calendar. */
export function isBillingDate(anchor: Date, interval: Interval, count: number, t: Date): boolean {
  return periodContaining(anchor, interval, count, t).start.getTime() === t.getTime();
}

/**
 * The periods that overlap `[from, to)` (start < to and end > from), in order; empty when
 * `to <= from`. The first may start before `from` and the last may end after `to`. The list
 * has one entry per period, so keep the range proportionate to the interval (a daily
 * calendar over ten years is 3,653 periods).
 */
export function periodsBetween(anchor: Date, interval: Interval, count: number, from: Date, to: Date): Period[] {
  checkDate(from, 'from');
  checkDate(to, 'to');
  if (to.getTime() <= from.getTime()) return [];
  const periods: Period[] = [];
  let index = periodIndexAt(anchor, interval, count, from);
  let start = billingDate(anchor, interval, count, index);
  while (start.getTime() < to.getTime()) {
    const end = billingDate(anchor, interval, count, index + 1);
    periods.push({ start, end, index });
    index += 1;
    start = end;
  }
  return periods;
}
