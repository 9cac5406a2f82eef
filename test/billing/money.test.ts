import assert from 'node:assert/strict';
import fc from 'fast-check';
import Decimal from 'decimal.js';
import {
  amountToCents,
  centsToAmount,
  compareAmounts,
  multiplyAmount,
  negateAmount,
  parseAmount,
  subtractAmounts,
  sumAmounts,
  toAmount,
} from '../../src/billing/money';

const AMOUNT_FORMAT = /^-?\d+\.\d{2}$/;

/** Reference formatting of integer cents with BigInt: no decimal library, no floats. */
function bigCents(c: bigint): string {
  const neg = c < 0n;
  const abs = neg ? -c : c;
  const s = `${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
  return neg && abs !== 0n ? `-${s}` : s;
}

const centsArb = fc.integer({ min: 0, max: 99_999_999_999 });
const signedCentsArb = fc.integer({ min: -99_999_999_999, max: 99_999_999_999 });

describe('money: centsToAmount', () => {
  it('formats integer cents with exactly two decimals', () => {
    expect(centsToAmount(1999)).toBe('19.99');
    expect(centsToAmount(0)).toBe('0.00');
    expect(centsToAmount(5)).toBe('0.05');
    expect(centsToAmount(100)).toBe('1.00');
    expect(centsToAmount(-250)).toBe('-2.50');
    expect(centsToAmount(Number.MAX_SAFE_INTEGER)).toBe('90071992547409.91');
  });

  it('refuses fractional or non-finite cents instead of rounding them', () => {
    expect(() => centsToAmount(19.5)).toThrow(RangeError);
    expect(() => centsToAmount(NaN)).toThrow(RangeError);
    expect(() => centsToAmount(Infinity)).toThrow(RangeError);
  });

  it('matches a BigInt reference and round-trips through amountToCents for any cents', () => {
    fc.assert(
      fc.property(signedCentsArb, (c) => {
        const a = centsToAmount(c);
        assert.equal(a, bigCents(BigInt(c)));
        assert.match(a, AMOUNT_FORMAT);
        assert.equal(amountToCents(a), c);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('money: toAmount', () => {
  it('rounds half away from zero to the cent', () => {
    expect(toAmount('3.455')).toBe('3.46');
    expect(toAmount('3.454999')).toBe('3.45');
    expect(toAmount('0.005')).toBe('0.01');
    expect(toAmount('0.015')).toBe('0.02'); // half-even would give 0.02 too; 0.025 tells them apart
    expect(toAmount('0.025')).toBe('0.03');
    expect(toAmount('-0.005')).toBe('-0.01');
    expect(toAmount('-0.025')).toBe('-0.03');
    expect(toAmount(2)).toBe('2.00');
    expect(toAmount('1e2')).toBe('100.00');
    expect(toAmount(new Decimal(1).div(3))).toBe('0.33');
    expect(toAmount(new Decimal(2).div(3))).toBe('0.67');
  });

  it('never returns negative zero', () => {
    expect(toAmount('-0.001')).toBe('0.00');
    expect(toAmount('-0.0049999')).toBe('0.00');
    expect(toAmount('-0')).toBe('0.00');
    expect(negateAmount('0.00')).toBe('0.00');
  });

  it('refuses values that are not finite numbers', () => {
    expect(() => toAmount('abc')).toThrow();
    expect(() => toAmount(NaN)).toThrow();
    expect(() => toAmount(Infinity)).toThrow();
  });

  it('is within half a cent of the exact value, idempotent, and symmetric in sign', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.integer({ min: 0, max: 8 }), (mantissa, scale) => {
        const exact = new Decimal(mantissa.toString()).div(new Decimal(10).pow(scale));
        const a = toAmount(exact);
        assert.match(a, AMOUNT_FORMAT);
        assert.equal(new Decimal(a).minus(exact).abs().lte('0.005'), true);
        assert.equal(toAmount(a), a);
        assert.equal(negateAmount(a), toAmount(exact.neg()));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('money: parseAmount', () => {
  it('accepts non-negative decimal strings with up to two decimals', () => {
    for (const [s, v] of [
      ['10', '10'],
      ['10.5', '10.5'],
      ['10.50', '10.5'],
      ['0.99', '0.99'],
      ['0', '0'],
      [' 7.25 ', '7.25'],
      ['0007.10', '7.1'],
      ['9999999999999.99', '9999999999999.99'],
    ]) {
      expect(parseAmount(s)?.toString()).toBe(v);
    }
  });

  it('rejects everything else', () => {
    for (const s of ['', ' ', '-1', '-0.01', '+1', '1.', '.5', '1.234', '1e3', '1,00', 'abc', 'NaN', 'Infinity', '0x10', '1 000', '10000000000000', '١٢']) {
      expect(parseAmount(s)).toBeNull();
    }
    expect(parseAmount(12 as unknown as string)).toBeNull();
    expect(parseAmount(null as unknown as string)).toBeNull();
  });

  it('parses every formatted amount back to its value', () => {
    fc.assert(
      fc.property(centsArb, (c) => {
        assert.equal(parseAmount(centsToAmount(c))?.times(100).toNumber(), c);
      }),
      { numRuns: 3000 },
    );
  });

  it('rejects any string with more than two decimals', () => {
    fc.assert(
      fc.property(fc.nat(), fc.stringMatching(/^\d{3,6}$/), (int, decimals) => {
        assert.equal(parseAmount(`${int}.${decimals}`), null);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('money: arithmetic', () => {
  it('adds and multiplies without float errors', () => {
    expect(sumAmounts(['0.10', '0.20'])).toBe('0.30');
    expect(sumAmounts([])).toBe('0.00');
    expect(sumAmounts(['19.99', '-5.48', '0.01'])).toBe('14.52');
    expect(multiplyAmount('0.10', 3)).toBe('0.30');
    expect(multiplyAmount('19.99', 3)).toBe('59.97');
    expect(multiplyAmount('1.005', 1)).toBe('1.01');
    expect(multiplyAmount('-5.48', 2)).toBe('-10.96');
    expect(subtractAmounts('80.00', '5.48')).toBe('74.52');
    expect(compareAmounts('10.00', '9.99')).toBe(1);
    expect(compareAmounts('9.5', '9.50')).toBe(0);
    expect(compareAmounts('-1', '0')).toBe(-1);
  });

  it('refuses a fractional quantity', () => {
    expect(() => multiplyAmount('1.00', 1.5)).toThrow(RangeError);
  });

  it('sums and multiplies exactly like integer cents (BigInt reference)', () => {
    fc.assert(
      fc.property(fc.array(signedCentsArb, { maxLength: 30 }), fc.integer({ min: 0, max: 1_000_000 }), (list, qty) => {
        const amounts = list.map(centsToAmount);
        const total = list.reduce((acc, c) => acc + BigInt(c), 0n);
        assert.equal(sumAmounts(amounts), bigCents(total));
        if (list.length > 0) assert.equal(multiplyAmount(amounts[0], qty), bigCents(BigInt(list[0]) * BigInt(qty)));
        if (list.length > 1) assert.equal(subtractAmounts(amounts[0], amounts[1]), bigCents(BigInt(list[0]) - BigInt(list[1])));
      }),
      { numRuns: 3000 },
    );
  });
});
