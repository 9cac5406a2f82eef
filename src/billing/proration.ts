/**
 * Proration: what part of a billing period's price is charged or credited when service
 * starts or changes mid-period (docs/adr/0306-billing-plan-and-proration.md).
 *
 * - Time is measured exactly, in milliseconds, not in days: for instants on whole seconds
 *   (what the API stores) this is the spec's "by seconds", and a 17-day stub of a 31-day
 *   month is exactly 17/31 of it. Amounts are multiplied by the elapsed milliseconds before
 *   dividing by the period's length, so a result that is exactly half a cent is rounded up,
 *   never lost to a rounded fraction.
 * - Prorations are computed per unit and rounded to the cent (half away from zero), then
 *   multiplied by the integer quantity. Every prorated line therefore keeps the spec's
 *   invoice-line rule `amount = unit_amount x quantity` with a two-decimal `unit_amount`.
 *   The price of that rule: a prorated line may differ from (line total x fraction) by up to
 *   half a cent per unit of quantity.
 * - When one amount is split in two at an instant, only one part is rounded; the other is
 *   the total minus it, so the parts always add up to the total exactly. With several cuts,
 *   each part is the difference of rounded cumulative amounts (within a cent of its exact
 *   value) and the parts again add up exactly.
 * - Credits never exceed what was charged: the credit for unused time is at most the amount
 *   billed for the period it is taken from.
 * - A negative net is never invoiced: {@link applyCarriedCredit} turns it into credit that is
 *   applied to the following invoices.
 *
 * Pure: no I/O, no clock; safe to import from Temporal workflows.
 */
import Decimal from 'decimal.js';
import { Money, toAmount } from './money';
import { Interval, periodContaining } from './calendar';

export type ProrationBehavior = 'create_prorations' | 'always_invoice' | 'none';

export const PRORATION_BEHAVIORS: readonly ProrationBehavior[] = ['create_prorations', 'always_invoice', 'none'];

/** An item priced per period: `unit_amount` is the effective unit price, e.g. "10.00". */
export interface ProrationItem {
  price_id: string;
  quantity: number;
  unit_amount: string;
}

/**
 * One line of a proration: `unit_amount` is the prorated unit price (negative for a credit),
 * `amount = unit_amount x quantity`. `index` is the position of the item in the list it was
 * made from, so callers can attach their own item fields (product, name).
 */
export interface ProrationLine {
  index: number;
  price_id: string;
  quantity: number;
  unit_amount: string;
  amount: string;
  description: string;
}

export const DESCRIPTIONS = {
  full: 'Subscription period',
  prorated: 'Prorated subscription period',
  unused: 'Unused time before the phase change',
  oneTime: 'One-time charge',
  carriedCredit: 'Credit carried from earlier changes',
} as const;

function ms(d: Date, name: string): number {
  const t = d instanceof Date ? d.getTime() : NaN;
  if (Number.isNaN(t)) throw new RangeError(`${name} is not a valid date`);
  return t;
}

/**
 * A share of a period as an exact ratio of two integers (milliseconds): `num / den`, with
 * `0 <= num <= den` and `den > 0`. Multiplying by `num` before dividing by `den` keeps a
 * proration exact whenever the exact result is a terminating decimal, so a value that is
 * exactly half a cent is recognised as such and rounded up.
 */
export interface Share {
  num: number;
  den: number;
}

/**
 * The share of the period `[periodStart, periodEnd)` that remains from `from` to `periodEnd`,
 * as an exact ratio clamped to [0, 1]: 1 (`den/den`) when `from <= periodStart`, 0 when
 * `from >= periodEnd`. Throws a RangeError when the period is empty or reversed.
 */
export function remainingShare(periodStart: Date, periodEnd: Date, from: Date): Share {
  const s = ms(periodStart, 'periodStart');
  const e = ms(periodEnd, 'periodEnd');
  const f = ms(from, 'from');
  if (e <= s) throw new RangeError('a period must end after it starts');
  return { num: e - Math.min(Math.max(f, s), e), den: e - s };
}

/**
 * The fraction of the period `[periodStart, periodEnd)` that remains from `from` to
 * `periodEnd`, as a Decimal (40 significant digits) clamped to [0, 1]: 1 when
 * `from <= periodStart`, 0 when `from >= periodEnd`. Throws a RangeError when the period is
 * empty or reversed. For money, prefer {@link remainingShare}, which is exact.
 */
export function prorationFraction(periodStart: Date, periodEnd: Date, from: Date): Decimal {
  const { num, den } = remainingShare(periodStart, periodEnd, from);
  return new Money(num).div(den);
}

const isShare = (x: unknown): x is Share => typeof x === 'object' && x !== null && 'num' in x && 'den' in x && !(x instanceof Decimal);

/** `amount x fraction` (a Decimal value or an exact {@link Share}), rounded to the cent. */
export function prorateAmount(amount: Decimal.Value, fraction: Decimal.Value | Share): string {
  const a = new Money(amount);
  return toAmount(isShare(fraction) ? a.times(fraction.num).div(fraction.den) : a.times(fraction));
}

/**
 * Splits the (two-decimal) amount billed for `[periodStart, periodEnd)` at `at`: `after` (the part for
 * `[at, periodEnd)`) is rounded to the cent, `before` is `total - after`, so
 * `before + after = total` exactly and each is within half a cent of its exact share.
 */
export function splitAmount(total: Decimal.Value, periodStart: Date, periodEnd: Date, at: Date): { before: string; after: string } {
  const after = prorateAmount(total, remainingShare(periodStart, periodEnd, at));
  return { before: toAmount(new Money(total).minus(after)), after };
}

/**
 * Splits the (two-decimal) amount of `[periodStart, periodEnd)` at several instants (in any order; those
 * outside the period are clamped to it) into `cuts.length + 1` consecutive parts. Part i is
 * the rounded cumulative amount up to its end minus the one up to its start, so every part is
 * within one cent of its exact share and the parts sum exactly to `total`.
 */
export function splitAcross(total: Decimal.Value, periodStart: Date, periodEnd: Date, cuts: Date[]): string[] {
  const sorted = [...cuts].sort((a, b) => ms(a, 'cut') - ms(b, 'cut'));
  const cumulative = (t: Date) => {
    const { num, den } = remainingShare(periodStart, periodEnd, t);
    return prorateAmount(total, { num: den - num, den });
  };
  const bounds = [toAmount(0), ...sorted.map(cumulative), toAmount(total)];
  return bounds.slice(1).map((b, i) => toAmount(new Money(b).minus(bounds[i])));
}

/** Sum of `unit_amount x quantity` over the items, as a two-decimal string. */
export function itemsTotal(items: readonly ProrationItem[]): string {
  return toAmount(items.reduce<Decimal>((acc, i) => acc.plus(new Money(i.unit_amount).times(i.quantity)), new Money(0)));
}

/**
 * One line per item at `fraction` of its unit price (unit rounded to the cent, then times the
 * quantity), negated when `sign` is -1. Fraction 1 gives the full price.
 */
export function prorateItems(items: readonly ProrationItem[], fraction: Decimal.Value | Share, description: string, sign: 1 | -1 = 1): ProrationLine[] {
  return items.map((item, index) => {
    if (!Number.isSafeInteger(item.quantity)) throw new RangeError(`quantity must be an integer, got ${item.quantity}`);
    const unit = new Money(prorateAmount(item.unit_amount, fraction)).times(sign);
    return {
      index,
      price_id: item.price_id,
      quantity: item.quantity,
      unit_amount: toAmount(unit),
      amount: toAmount(unit.times(item.quantity)),
      description,
    };
  });
}

/** Sum of line amounts, as a two-decimal string. */
export function linesTotal(lines: readonly { amount: string }[]): string {
  return toAmount(lines.reduce<Decimal>((acc, l) => acc.plus(l.amount), new Money(0)));
}

/** The charge made when recurring items start: see {@link initialCharge}. */
export interface InitialCharge {
  /** The instant service starts (the invoice's period start and billing date). */
  periodStart: Date;
  /** The first billing date strictly after the start: where the next period begins. */
  periodEnd: Date;
  /** Share of the period's price charged (40 significant digits): 1 for a full period. */
  fraction: Decimal;
  /** True when less than a full period's price is charged. */
  prorated: boolean;
  lines: ProrationLine[];
  total: string;
}

export interface InitialChargeInput {
  /** When the recurring items start. */
  start: Date;
  /** The calendar's anchor: billing dates are anchor + n x count x interval. */
  anchor: Date;
  interval: Interval;
  count: number;
  /** The recurring items, with their effective unit prices. */
  items: readonly ProrationItem[];
  /**
   * True at a later phase's start: the subscription is already billing, so a start on a billing
   * date is an ordinary renewal. False (default) at the subscription's start.
   */
  continuing?: boolean;
}

/**
 * What to bill at `start` for recurring items whose billing dates step from `anchor`. The
 * charge covers `[start, next billing date)`:
 * - `none` at the subscription's start: null, even on a billing date (the spec: "charges start
 *   on the next billing cycle"); the first invoice is the next billing date's;
 * - otherwise, start on a billing date: a full period, whatever the behaviour;
 * - otherwise `create_prorations`: the items' prices times the fraction of the anchored
 *   period that remains from `start` (by time);
 * - otherwise `always_invoice`: one full period's price at once, regardless of the cycle;
 * - otherwise `none`: null, nothing is billed until the next billing date.
 */
export function initialCharge(behavior: ProrationBehavior, input: InitialChargeInput): InitialCharge | null {
  if (!PRORATION_BEHAVIORS.includes(behavior)) throw new RangeError(`unknown proration behavior: ${String(behavior)}`);
  if (behavior === 'none' && !input.continuing) return null;
  const period = periodContaining(input.anchor, input.interval, input.count, input.start);
  const onCycle = period.start.getTime() === input.start.getTime();
  let share: Share;
  if (onCycle || behavior === 'always_invoice') share = { num: 1, den: 1 };
  else if (behavior === 'create_prorations') share = remainingShare(period.start, period.end, input.start);
  else return null;
  const prorated = share.num < share.den;
  const lines = prorateItems(input.items, share, prorated ? DESCRIPTIONS.prorated : DESCRIPTIONS.full);
  return { periodStart: input.start, periodEnd: period.end, fraction: new Money(share.num).div(share.den), prorated, lines, total: linesTotal(lines) };
}

export interface UnusedCreditInput {
  /** Start of the span the items were billed for (a period start, or a mid-period start). */
  billedFrom: Date;
  /** End of that span (the billing date that follows it). */
  billedTo: Date;
  /** When the items stop. */
  changeAt: Date;
  /** The items with the unit amounts actually billed for `[billedFrom, billedTo)`. */
  items: readonly ProrationItem[];
}

/**
 * The credit for items billed for `[billedFrom, billedTo)` that stop at `changeAt`: each
 * billed unit times the unused fraction `(billedTo - changeAt) / (billedTo - billedFrom)`,
 * rounded per unit. Lines are negative; `credit` is their total as a positive string. Never
 * more than what was billed; zero when `changeAt >= billedTo`.
 */
export function unusedCredit(input: UnusedCreditInput): { credit: string; lines: ProrationLine[]; fraction: Decimal } {
  const share = remainingShare(input.billedFrom, input.billedTo, input.changeAt);
  const lines = prorateItems(input.items, share, DESCRIPTIONS.unused, -1);
  return { credit: toAmount(new Money(linesTotal(lines)).neg()), lines, fraction: new Money(share.num).div(share.den) };
}

export interface PhaseChangeInput {
  /** The period the old items were billed for (in full: their unit prices are per period). */
  periodStart: Date;
  periodEnd: Date;
  /** When the new items replace the old ones. */
  changeAt: Date;
  oldItems: readonly ProrationItem[];
  newItems: readonly ProrationItem[];
  /**
   * The new items' own period when their cycle differs from the old one (another interval);
   * defaults to `[periodStart, periodEnd)`.
   */
  newPeriod?: { start: Date; end: Date };
}

export interface PhaseChangeProration {
  /** Unused share of the old items, as a positive amount. */
  credit: string;
  /** Remaining share of the new items. */
  charge: string;
  /** `charge - credit`; negative when the change is a downgrade. */
  net: string;
  /** Negative lines, one per old item. */
  creditLines: ProrationLine[];
  /** Positive lines, one per new item. */
  chargeLines: ProrationLine[];
}

/**
 * `create_prorations` at a mid-period change: credits the unused share of the old items
 * (from `changeAt` to the end of their period) and charges the remaining share of the new
 * items (from `changeAt` to the end of theirs). A negative `net` is not an invoice: pass it
 * to {@link applyCarriedCredit}, which carries it as credit.
 */
export function phaseChangeProration(input: PhaseChangeInput): PhaseChangeProration {
  const credit = unusedCredit({ billedFrom: input.periodStart, billedTo: input.periodEnd, changeAt: input.changeAt, items: input.oldItems });
  const period = input.newPeriod ?? { start: input.periodStart, end: input.periodEnd };
  const share = remainingShare(period.start, period.end, input.changeAt);
  const chargeLines = prorateItems(input.newItems, share, share.num < share.den ? DESCRIPTIONS.prorated : DESCRIPTIONS.full);
  const charge = linesTotal(chargeLines);
  return { credit: credit.credit, charge, net: toAmount(new Money(charge).minus(credit.credit)), creditLines: credit.lines, chargeLines };
}

/**
 * Applies carried credit to an invoice's total (which may be negative: the net of a
 * downgrade). Returns the total to invoice, the credit used and the credit left:
 * - total >= 0: `applied = min(credit, total)`, `total - applied` is invoiced;
 * - total < 0: nothing is invoiced (`"0.00"`) and `-total` is added to the credit.
 * Invariants: `total >= 0`, `remainingCredit >= 0`, and
 * `total_out - remainingCredit = total_in - credit` (no money appears or vanishes).
 * Throws a RangeError on a negative credit.
 */
export function applyCarriedCredit(invoiceTotal: Decimal.Value, credit: Decimal.Value): { total: string; applied: string; remainingCredit: string } {
  const total = new Money(invoiceTotal);
  const c = new Money(credit);
  if (c.lt(0)) throw new RangeError(`credit cannot be negative: ${c.toString()}`);
  if (total.lt(0)) return { total: toAmount(0), applied: toAmount(0), remainingCredit: toAmount(c.plus(total.neg())) };
  const applied = Decimal.min(c, total);
  return { total: toAmount(total.minus(applied)), applied: toAmount(applied), remainingCredit: toAmount(c.minus(applied)) };
}
