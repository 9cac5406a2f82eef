/**
 * Money in major units (dollars) as decimal strings with exactly two decimals ("19.99"),
 * computed with decimal.js and never with JavaScript floats (docs/adr/0103-money-and-amounts.md).
 * Prices store integer cents; everything else on the wire is such a string.
 *
 * Rounding: to the cent, ROUND_HALF_UP in decimal.js terms, which is "half away from zero"
 * (0.005 -> 0.01, -0.005 -> -0.01). It is symmetric, so a credit is rounded exactly like the
 * charge it mirrors. Banker's rounding (half-even) was considered and rejected: invoices are
 * read by people who expect the school rule, and every billed amount is rounded once, so
 * half-even's statistical advantage does not apply.
 *
 * Pure: no I/O, no clock; safe to import from Temporal workflows.
 */
import Decimal from 'decimal.js';

/**
 * The decimal.js constructor used for all money math: 40 significant digits (far beyond any
 * amount plus the ratios used for proration) and half-up rounding. Values made by it are
 * ordinary `Decimal` instances.
 */
const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });

export { D as Money };

/** Largest number of integer digits accepted by {@link parseAmount} (below $10 trillion). */
export const MAX_AMOUNT_INTEGER_DIGITS = 13;

const AMOUNT = new RegExp(`^\\d{1,${MAX_AMOUNT_INTEGER_DIGITS}}(\\.\\d{1,2})?$`);

/**
 * Rounds any decimal value to the cent (half away from zero) and formats it with exactly
 * two decimals: `toAmount("3.455")` is `"3.46"`, `toAmount(2)` is `"2.00"`. Never returns
 * `"-0.00"`: a value that rounds to zero is `"0.00"`. Throws (decimal.js error) on a value
 * that is not a finite number, such as `"abc"`, `NaN` or `Infinity`.
 */
export function toAmount(x: Decimal.Value): string {
  const d = new D(x);
  if (!d.isFinite()) throw new RangeError(`not a finite amount: ${String(x)}`);
  const rounded = d.toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
  return (rounded.isZero() ? new D(0) : rounded).toFixed(2);
}

/**
 * Integer cents (a price's `amount`) to a two-decimal string: 1999 -> "19.99", 5 -> "0.05",
 * -250 -> "-2.50". Throws a RangeError when `cents` is not a safe integer (a fractional cent
 * is a bug upstream, never something to round silently).
 */
export function centsToAmount(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`cents must be an integer, got ${cents}`);
  return toAmount(new D(cents).div(100));
}

/**
 * Two-decimal amount string to integer cents: "19.99" -> 1999. Rounds to the cent first
 * (half away from zero). Throws on a value that is not a finite number.
 */
export function amountToCents(amount: Decimal.Value): number {
  return new D(toAmount(amount)).times(100).toNumber();
}

/**
 * Parses a user-supplied amount: a non-negative decimal string with 1 to 13 integer digits
 * and at most two decimals ("10", "10.5", "10.50", "0.99"; surrounding whitespace is
 * ignored). Returns the value as a Decimal, or null for anything else: negative numbers,
 * more than two decimals, exponents, "1.", ".5", empty strings and non-strings.
 */
export function parseAmount(s: string): Decimal | null {
  if (typeof s !== 'string') return null;
  const t = s.trim();
  if (!AMOUNT.test(t)) return null;
  return new D(t);
}

/** Exact sum of amount strings, as a two-decimal string. `sumAmounts([])` is "0.00". */
export function sumAmounts(list: readonly Decimal.Value[]): string {
  return toAmount(list.reduce<Decimal>((acc, x) => acc.plus(x), new D(0)));
}

/** `a - b` as a two-decimal string (may be negative). */
export function subtractAmounts(a: Decimal.Value, b: Decimal.Value): string {
  return toAmount(new D(a).minus(b));
}

/** `-a` as a two-decimal string ("0.00" stays "0.00"). */
export function negateAmount(a: Decimal.Value): string {
  return toAmount(new D(a).neg());
}

/** -1, 0 or 1 as a is below, equal to or above b (compared as decimals, not as strings). */
export function compareAmounts(a: Decimal.Value, b: Decimal.Value): -1 | 0 | 1 {
  return new D(a).comparedTo(b) as -1 | 0 | 1;
}

/**
 * A line amount: `unit` times an integer `quantity`, rounded to the cent. With a two-decimal
 * `unit` the product is exact, which keeps the spec's `amount = unit_amount x quantity`.
 * Throws a RangeError when `quantity` is not a safe integer.
 */
export function multiplyAmount(unit: Decimal.Value, quantity: number): string {
  if (!Number.isSafeInteger(quantity)) throw new RangeError(`quantity must be an integer, got ${quantity}`);
  return toAmount(new D(unit).times(quantity));
}
