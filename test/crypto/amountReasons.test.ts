import Decimal from 'decimal.js';
import { cryptoAmountError, decimalPlacesOf, formatCryptoAmount, toDecimal, usdValue } from '../../src/cryptocurrency/amounts';

describe('crypto amount errors name their reason', () => {
  it.each([
    ['BTC', 15, 'amount must be a decimal string'],
    ['DOGE', '1', 'unsupported currency DOGE'],
    ['BTC', '0', 'amount must be greater than zero'],
    ['BTC', '0.000000000', 'BTC amounts have at most 8 decimal places'],
    ['BTC', '21000001', 'amount is too large for BTC'],
    ['ETH', '1000000000000000', 'amount is too large for ETH'],
  ])('%s %s: %s', (currency, s, expected) => {
    expect(cryptoAmountError(currency as 'BTC', s)).toBe(expected);
  });
});

describe('decimalPlacesOf', () => {
  it.each([
    ['3', 0],
    ['1.50', 2],
    ['0.5', 1],
    ['.5', 1],
    ['12.', 0],
  ])('%s has %i fraction digits', (s, n) => {
    expect(decimalPlacesOf(s)).toBe(n);
  });
});

describe('formatCryptoAmount', () => {
  it('refuses an unsupported currency, a non-finite or an over-precise Decimal with its reason', () => {
    expect(() => formatCryptoAmount('DOGE' as 'BTC', '1')).toThrow(new RangeError('unsupported currency DOGE'));
    expect(() => formatCryptoAmount('DOGE' as 'BTC', new Decimal(1))).toThrow(new RangeError('unsupported currency DOGE'));
    expect(() => formatCryptoAmount('BTC', new Decimal(Infinity))).toThrow(new RangeError('amount must be finite'));
    expect(() => formatCryptoAmount('BTC', new Decimal(NaN))).toThrow(new RangeError('amount must be finite'));
    expect(() => formatCryptoAmount('BTC', new Decimal('0.000000001'))).toThrow(new RangeError('BTC amounts have at most 8 decimal places'));
    expect(() => formatCryptoAmount('BTC', '-1')).toThrow(new RangeError('amount must be a positive decimal string such as "0.015"'));
  });

  it('returns a valid string with exactly minDecimals fraction digits as given, pads one with fewer', () => {
    expect(formatCryptoAmount('BTC', '1.50', 2)).toBe('1.50');
    expect(formatCryptoAmount('BTC', '1.5', 2)).toBe('1.50');
    expect(formatCryptoAmount('BTC', '1.500', 2)).toBe('1.500');
  });
});

describe('toDecimal', () => {
  it('takes a finite Decimal or a decimal string, naming what was wrong', () => {
    expect(toDecimal(new Decimal('1.25')).toString()).toBe('1.25');
    expect(() => toDecimal(new Decimal(Infinity), 'total')).toThrow(new TypeError('total must be a decimal string'));
    expect(() => toDecimal(1.5 as unknown as string, 'total')).toThrow(new TypeError('total must be a decimal string'));
    expect(() => toDecimal({ isFinite: () => true } as unknown as string, 'total')).toThrow(new TypeError('total must be a decimal string'));
    expect(() => toDecimal(undefined as unknown as string)).toThrow(new TypeError('value must be a decimal string'));
    expect(() => toDecimal('1e3', 'total')).toThrow(new TypeError('total must be a decimal string, got "1e3"'));
    expect(() => toDecimal('x')).toThrow(new TypeError('value must be a decimal string, got "x"'));
  });
});

describe('usdValue', () => {
  it('names the bad input', () => {
    expect(() => usdValue('x', '1')).toThrow(new TypeError('amount must be a decimal string, got "x"'));
    expect(() => usdValue('1', 'x')).toThrow(new TypeError('usdPrice must be a decimal string, got "x"'));
    expect(() => usdValue('-1', '1')).toThrow(new RangeError('amount and price must not be negative'));
    expect(() => usdValue('1', '-1')).toThrow(new RangeError('amount and price must not be negative'));
  });
});
