/**
 * The billing calendar: billing dates step from an anchor by an interval. Every date is
 * computed from the anchor (never by stepping from the previous date), so month-end
 * clamping never drifts: Jan 31 -> Feb 28 (29) -> Mar 31 -> Apr 30. UTC, time of day kept.
 * Pure.
 */
export type Interval = 'day' | 'week' | 'month' | 'year';

const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

function addMonths(anchor: Date, months: number): Date {
  const total = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(
    Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()),
  );
}

/** The n-th billing date from the anchor (n may be negative). */
export function billingDate(anchor: Date, interval: Interval, count: number, n: number): Date {
  switch (interval) {
    case 'day':
      return new Date(anchor.getTime() + n * count * DAY_MS);
    case 'week':
      return new Date(anchor.getTime() + n * count * 7 * DAY_MS);
    case 'month':
      return addMonths(anchor, n * count);
    case 'year':
      return addMonths(anchor, n * count * 12);
  }
}

function approxLengthMs(interval: Interval, count: number): number {
  const days = { day: 1, week: 7, month: 30.436875, year: 365.2425 }[interval];
  return days * count * DAY_MS;
}

/** The index n with billingDate(n) <= t < billingDate(n + 1). */
export function periodIndexAt(anchor: Date, interval: Interval, count: number, t: Date): number {
  let n = Math.floor((t.getTime() - anchor.getTime()) / approxLengthMs(interval, count));
  while (billingDate(anchor, interval, count, n).getTime() > t.getTime()) n -= 1;
  while (billingDate(anchor, interval, count, n + 1).getTime() <= t.getTime()) n += 1;
  return n;
}

export interface Period {
  start: Date;
  end: Date;
  index: number;
}

/** The billing period containing t: start <= t < end. */
export function periodContaining(anchor: Date, interval: Interval, count: number, t: Date): Period {
  const index = periodIndexAt(anchor, interval, count, t);
  return { index, start: billingDate(anchor, interval, count, index), end: billingDate(anchor, interval, count, index + 1) };
}

/** The first billing date strictly after `after`. */
export function nextBillingDate(anchor: Date, interval: Interval, count: number, after: Date): Date {
  return periodContaining(anchor, interval, count, after).end;
}

/** True when t is exactly a billing date of the calendar. */
export function isBillingDate(anchor: Date, interval: Interval, count: number, t: Date): boolean {
  return periodContaining(anchor, interval, count, t).start.getTime() === t.getTime();
}
