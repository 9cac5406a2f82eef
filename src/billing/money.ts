/**
 * Money in major units as decimal strings with exactly two decimals ("19.99"), computed with
 * decimal.js, never floats. Rounding is half-up to the cent. Pure.
 */
import Decimal from 'decimal.js';

const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });

export { D as Money };

/** Integer cents (a price's `amount`) -> "19.99". */
export function centsToAmount(cents: number): string {
  return new D(cents).div(100).toFixed(2);
}

/** Any decimal value -> two-decimal string, half-up. */
export function toAmount(x: Decimal.Value): string {
  return new D(x).toFixed(2, Decimal.ROUND_HALF_UP);
}

/** A non-negative decimal string with at most two decimals, or null. */
export function parseAmount(s: string): Decimal | null {
  if (typeof s !== 'string' || !/^\d{1,13}(\.\d{1,2})?$/.test(s.trim())) return null;
  return new D(s.trim());
}

export function sumAmounts(list: string[]): string {
  return toAmount(list.reduce((acc, x) => acc.plus(x), new D(0)));
}

export function multiplyAmount(unit: string, quantity: number): string {
  return toAmount(new D(unit).times(quantity));
}
