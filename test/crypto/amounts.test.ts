import fc from 'fast-check';
import Decimal from 'decimal.js';
import { cryptoAmountError, formatCryptoAmount, parseCryptoAmount, toCents, usdValue } from '../../src/cryptocurrency/amounts';

/** Exact integer-based reference: value * 10^scale as a bigint. */
function scaled(s: string, scale: number): bigint {
  const [i, f = ''] = s.split('.');
  return BigInt(i + f.padEnd(scale, '0').slice(0, scale));
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const amountString = (maxDecimals: number) =>
  fc
    .tuple(fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digits(0, 6)).map(([a, b]) => a + b)), fc.option(digits(1, maxDecimals), { nil: undefined }))
    .map(([i, f]) => (f === undefined ? i : `${i}.${f}`))
    .filter((s) => /[1-9]/.test(s));

describe('parseCryptoAmount', () => {
  it('accepts positive plain decimals within the currency precision', () => {
    expect(parseCryptoAmount('BTC', '0.00000001')?.toFixed()).toBe('0.00000001');
    expect(parseCryptoAmount('BTC', '21000000')?.toFixed()).toBe('21000000');
    expect(parseCryptoAmount('BTC', '1.50000000')?.toFixed()).toBe('1.5');
    expect(parseCryptoAmount('ETH', '0.000000000000000001')?.toFixed()).toBe('0.000000000000000001');
    // 33 significant digits: more than decimal.js' default precision of 20, still exact.
    expect(parseCryptoAmount('ETH', '123456789012345.123456789012345678')?.toFixed()).toBe('123456789012345.123456789012345678');
  });

  it.each([
    ['BTC', '0'],
    ['BTC', '0.00000000'],
    ['BTC', '-1'],
    ['BTC', '+1'],
    ['BTC', '1e-8'],
    ['BTC', '1E3'],
    ['BTC', '.5'],
    ['BTC', '5.'],
    ['BTC', '01.5'],
    ['BTC', ' 1'],
    ['BTC', '1 '],
    ['BTC', '1,5'],
    ['BTC', '0x10'],
    ['BTC', 'NaN'],
    ['BTC', 'Infinity'],
    ['BTC', ''],
    ['BTC', '0.000000001'], // 9 decimals
    ['BTC', '21000000.00000001'], // above the supply cap
    ['ETH', '0.0000000000000000001'], // 19 decimals
    ['ETH', '1000000000000000'], // 16 integer digits
  ] as const)('%s rejects "%s"', (currency, s) => {
    expect(parseCryptoAmount(currency, s)).toBeNull();
    expect(cryptoAmountError(currency, s)).toEqual(expect.any(String));
  });

  it('rejects non-strings without throwing', () => {
    for (const v of [1, 0.5, null, undefined, {}, []]) expect(parseCryptoAmount('BTC', v as unknown as string)).toBeNull();
  });

  it('property: valid strings parse to exactly their value and format back unchanged', () => {
    for (const [currency, dp] of [['BTC', 8], ['ETH', 18]] as const) {
      fc.assert(
        fc.property(amountString(dp), (s) => {
          const d = parseCryptoAmount(currency, s);
          expect(d).not.toBeNull();
          expect(scaled(d!.toFixed(dp), dp)).toBe(scaled(s, dp));
          expect(formatCryptoAmount(currency, s)).toBe(s);
          expect(new Decimal(formatCryptoAmount(currency, d!)).eq(new Decimal(s))).toBe(true);
        }),
        { numRuns: 1000 },
      );
    }
  });
});

describe('formatCryptoAmount', () => {
  it('never uses exponent notation and keeps given precision', () => {
    expect(formatCryptoAmount('BTC', new Decimal('1e-8'))).toBe('0.00000001');
    expect(formatCryptoAmount('ETH', new Decimal('1e-18'))).toBe('0.000000000000000001');
    expect(formatCryptoAmount('ETH', new Decimal('1e21'))).toBe('1000000000000000000000');
    expect(formatCryptoAmount('BTC', '0.10000000')).toBe('0.10000000');
    expect(formatCryptoAmount('BTC', new Decimal('0.1'), 8)).toBe('0.10000000');
    expect(formatCryptoAmount('BTC', '0.1', 8)).toBe('0.10000000');
    expect(formatCryptoAmount('BTC', new Decimal('0.123'), 2)).toBe('0.123');
  });

  it('refuses more decimals than the currency has instead of rounding', () => {
    expect(() => formatCryptoAmount('BTC', new Decimal('0.000000001'))).toThrow(RangeError);
    expect(() => formatCryptoAmount('BTC', 'abc')).toThrow(RangeError);
  });
});

describe('usdValue and toCents', () => {
  it('rounds to cents half-up', () => {
    expect(usdValue('0.5', '60000')).toBe('30000.00');
    expect(usdValue('0.00000001', '60000')).toBe('0.00');
    expect(usdValue('0.00001', '500')).toBe('0.01'); // 0.005 -> 0.01
    expect(usdValue('0.000009', '500')).toBe('0.00'); // 0.0045 -> 0.00
    expect(usdValue('1.234567890123456789', '3456.78')).toBe('4267.63');
    expect(usdValue('123456789012345.123456789012345678', '1')).toBe('123456789012345.12');
    expect(toCents('2.675')).toBe('2.68'); // a float would say 2.67
    expect(toCents('-0.001')).toBe('0.00');
    expect(toCents('10')).toBe('10.00');
  });

  it('rejects malformed or negative input', () => {
    expect(() => usdValue('abc', '1')).toThrow();
    expect(() => usdValue('1', '-1')).toThrow();
    expect(() => usdValue('1e3', '1')).toThrow();
  });

  it('property: equals an exact integer computation', () => {
    fc.assert(
      fc.property(amountString(18), amountString(6), (amount, price) => {
        // amount * price scaled by 10^24, then half-up to 10^2.
        const exact = scaled(amount, 18) * scaled(price, 6);
        const unit = 10n ** 22n;
        const cents = (exact + unit / 2n) / unit;
        const expected = `${cents / 100n}.${(cents % 100n).toString().padStart(2, '0')}`;
        expect(usdValue(amount, price)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
