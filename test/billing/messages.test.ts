import { centsToAmount, multiplyAmount, toAmount } from '../../src/billing/money';
import { isMonth, monthStart, movementOf, subscriptionMrrCents } from '../../src/billing/mrr';
import { applyCarriedCredit, initialCharge, prorateItems, remainingShare, splitAcross } from '../../src/billing/proration';
import type { ProrationBehavior } from '../../src/billing/schedule';

const d = (s: string) => new Date(s);

describe('money errors name the bad value', () => {
  it('throws RangeErrors with the value', () => {
    expect(() => toAmount(Number.POSITIVE_INFINITY)).toThrow(new RangeError('not a finite amount: Infinity'));
    expect(() => centsToAmount(1.5)).toThrow(new RangeError('cents must be an integer, got 1.5'));
    expect(() => multiplyAmount('1.00', 1.5)).toThrow(new RangeError('quantity must be an integer, got 1.5'));
  });
});

describe('months', () => {
  it('are YYYY-MM', () => {
    for (const s of ['2026-01', '2026-12', '0001-09']) expect([s, isMonth(s)]).toEqual([s, true]);
    for (const s of ['2026-00', '2026-13', '2026-1', 'x2026-01', '2026-01x', '2026-01-01']) expect([s, isMonth(s)]).toEqual([s, false]);
    expect(() => monthStart('2026-13')).toThrow(new RangeError('not a month: 2026-13'));
    expect(monthStart('2026-02').toISOString()).toBe('2026-02-01T00:00:00.000Z');
  });
});

describe('MRR of items', () => {
  const sub = (items: Parameters<typeof subscriptionMrrCents>[0]['phases'][0]['items']) => ({
    id: 's', customer_id: 'c', canceled_at: null, phases: [{ start_date: d('2026-01-01T00:00:00Z'), end_date: null, items }],
  });
  it('counts recurring items with a known interval only', () => {
    const t = d('2026-02-01T00:00:00Z');
    expect(subscriptionMrrCents(sub([{ recurring: true, interval: 'month', interval_count: 1, quantity: 1, unit_amount: '10.00' }]), t)).toBe(1000);
    expect(subscriptionMrrCents(sub([{ recurring: false, interval: 'month', interval_count: 1, quantity: 1, unit_amount: '10.00' }]), t)).toBe(0);
    expect(subscriptionMrrCents(sub([{ recurring: true, interval: null, quantity: 1, unit_amount: '10.00' }]), t)).toBe(0);
    expect(subscriptionMrrCents(sub([{ recurring: true, interval: 'fortnight', interval_count: 1, quantity: 1, unit_amount: '10.00' }]), t)).toBe(0);
  });

  it('classifies movements', () => {
    expect([movementOf(5, 5), movementOf(0, 5), movementOf(5, 0), movementOf(5, 6), movementOf(6, 5)]).toEqual([null, 'new', 'churned', 'expansion', 'contraction']);
  });
});

describe('proration errors name the bad argument', () => {
  const s = d('2026-01-01T00:00:00Z');
  const e = d('2026-02-01T00:00:00Z');
  const bad = d('nope');
  it('throws RangeErrors', () => {
    expect(() => remainingShare(bad, e, s)).toThrow(new RangeError('periodStart is not a valid date'));
    expect(() => remainingShare(s, bad, s)).toThrow(new RangeError('periodEnd is not a valid date'));
    expect(() => remainingShare(s, e, bad)).toThrow(new RangeError('from is not a valid date'));
    expect(() => remainingShare(e, s, s)).toThrow(new RangeError('a period must end after it starts'));
    expect(() => splitAcross('10.00', s, e, [bad, d('2026-01-10T00:00:00Z')])).toThrow(new RangeError('cut is not a valid date'));
    expect(() => splitAcross('10.00', s, e, [d('2026-01-10T00:00:00Z'), bad])).toThrow(new RangeError('cut is not a valid date'));
    expect(() => prorateItems([{ unit_amount: '1.00', quantity: 1.5 } as never], 1, 'x')).toThrow(new RangeError('quantity must be an integer, got 1.5'));
    expect(() => applyCarriedCredit('1.00', '-1')).toThrow(new RangeError('credit cannot be negative: -1'));
    expect(() => initialCharge('sometimes' as ProrationBehavior, {} as never)).toThrow(new RangeError('unknown proration behavior: sometimes'));
  });
});
