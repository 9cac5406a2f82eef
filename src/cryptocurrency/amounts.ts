/**
 * Crypto and USD amounts as decimal strings (pure; never floats).
 *
 * A crypto amount is a positive plain decimal string: digits, optionally `.` and 1..N
 * fraction digits (BTC N = 8, ETH N = 18). No sign, exponent, whitespace, leading `.`,
 * trailing `.`, or leading zeros in the integer part ("0.5" yes, "00.5" and ".5" no).
 * Trailing fraction zeros are kept as given: "1.50000000" stays "1.50000000".
 * Upper bounds: BTC at most 21,000,000 (the supply cap); ETH at most 15 integer digits.
 */
import Decimal from 'decimal.js';
import type { CryptoCurrency } from './addresses';

/**
 * A Decimal constructor with enough precision for exact arithmetic on these amounts (the
 * default 20 significant digits would round 18-decimal ETH amounts) and half-up rounding.
 * A clone, so the global Decimal settings are untouched.
 */
export const Dec = Decimal.clone({ precision: 80, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100 });
export type Dec = Decimal;

export const CRYPTO_DECIMALS: Readonly<Record<CryptoCurrency, number>> = { BTC: 8, ETH: 18 };

const MAX_AMOUNT: Readonly<Record<CryptoCurrency, Decimal>> = {
  BTC: new Dec('21000000'),
  ETH: new Dec('999999999999999.999999999999999999'),
};

const AMOUNT_RE = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/**
 * Why `s` is not a valid amount of `currency`, or null when it is. For error messages.
 */
export function cryptoAmountError(currency: CryptoCurrency, s: unknown): string | null {
  if (typeof s !== 'string') return 'amount must be a decimal string';
  const max = CRYPTO_DECIMALS[currency];
  if (max === undefined) return `unsupported currency ${String(currency)}`;
  const m = AMOUNT_RE.exec(s);
  if (!m) return 'amount must be a positive decimal string such as "0.015"';
  if (m[2] !== undefined && m[2].length > max) return `${currency} amounts have at most ${max} decimal places`;
  const d = new Dec(s);
  if (d.lte(0)) return 'amount must be greater than zero';
  if (d.gt(MAX_AMOUNT[currency])) return `amount is too large for ${currency}`;
  return null;
}

/** The amount as a Decimal (of the `Dec` clone), or null when `s` is not a valid amount. */
export function parseCryptoAmount(currency: CryptoCurrency, s: string): Decimal | null {
  return cryptoAmountError(currency, s) === null ? new Dec(s) : null;
}

/** Number of fraction digits written in a decimal string ("1.50" -> 2, "3" -> 0). */
export function decimalPlacesOf(s: string): number {
  const dot = s.indexOf('.');
  return dot < 0 ? 0 : s.length - dot - 1;
}

/**
 * A crypto amount as a plain decimal string, never in exponent notation.
 * - a valid amount string is returned exactly as given (its precision is preserved);
 * - a Decimal is written with as many fraction digits as it needs, at least `minDecimals`
 *   (e.g. the precision of the amount it was derived from). A value needing more fraction
 *   digits than the currency has is a RangeError, never silently rounded.
 */
export function formatCryptoAmount(currency: CryptoCurrency, amount: Decimal | string, minDecimals = 0): string {
  const max = CRYPTO_DECIMALS[currency];
  if (max === undefined) throw new RangeError(`unsupported currency ${String(currency)}`);
  if (typeof amount === 'string') {
    const err = cryptoAmountError(currency, amount);
    if (err) throw new RangeError(err);
    if (decimalPlacesOf(amount) >= minDecimals) return amount;
    amount = new Dec(amount);
  }
  const d = new Dec(amount);
  if (!d.isFinite()) throw new RangeError('amount must be finite');
  const dp = d.decimalPlaces();
  if (dp > max) throw new RangeError(`${currency} amounts have at most ${max} decimal places`);
  return d.toFixed(Math.min(max, Math.max(dp, minDecimals)));
}

const USD_RE = /^-?(0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

/** A decimal string (optionally negative) as a Decimal, or a TypeError. */
export function toDecimal(s: string | Decimal, what = 'value'): Decimal {
  if (typeof s !== 'string') {
    if (Decimal.isDecimal(s) && s.isFinite()) return new Dec(s);
    throw new TypeError(`${what} must be a decimal string`);
  }
  if (!USD_RE.test(s)) throw new TypeError(`${what} must be a decimal string, got "${s}"`);
  return new Dec(s);
}

/** Rounds to cents, half-up (away from zero on .5), and writes exactly two decimals. */
export function toCents(v: string | Decimal): string {
  const d = toDecimal(v).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
  return (d.isZero() ? new Dec(0) : d).toFixed(2);
}

/**
 * USD value of `amount` coins at `usdPrice` USD per coin, rounded to cents half-up, as a
 * two-decimal string ("19.99"). Both inputs are non-negative decimal strings; the product
 * is computed exactly before the single rounding.
 */
export function usdValue(amount: string, usdPrice: string): string {
  const a = toDecimal(amount, 'amount');
  const p = toDecimal(usdPrice, 'usdPrice');
  if (a.isNegative() || p.isNegative()) throw new RangeError('amount and price must not be negative');
  return toCents(a.times(p));
}
