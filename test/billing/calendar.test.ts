import fc from 'fast-check';
import { billingDate, Interval, isBillingDate, nextBillingDate, periodContaining } from '../../src/billing/calendar';

const iso = (d: Date) => d.toISOString().slice(0, 10);
const intervals: Interval[] = ['day', 'week', 'month', 'year'];
const anchorArb = fc.date({ min: new Date('1990-01-01'), max: new Date('2090-01-01'), noInvalidDate: true });

describe('billing calendar', () => {
  it('steps monthly from Jan 31 with month-end clamping that never drifts', () => {
    const anchor = new Date('2026-01-31T09:30:00Z');
    const dates = Array.from({ length: 13 }, (_, n) => iso(billingDate(anchor, 'month', 1, n)));
    expect(dates).toEqual([
      '2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31',
      '2026-08-31', '2026-09-30', '2026-10-31', '2026-11-30', '2026-12-31', '2027-01-31',
    ]);
    expect(iso(billingDate(new Date('2028-01-31T00:00:00Z'), 'month', 1, 1))).toBe('2028-02-29');
    expect(billingDate(anchor, 'month', 1, 1).toISOString()).toBe('2026-02-28T09:30:00.000Z');
    expect(iso(billingDate(new Date('2028-02-29T00:00:00Z'), 'year', 1, 1))).toBe('2029-02-28');
    expect(iso(billingDate(new Date('2028-02-29T00:00:00Z'), 'year', 1, 4))).toBe('2032-02-29');
    expect(iso(billingDate(new Date('2026-08-31T00:00:00Z'), 'month', 6, 1))).toBe('2027-02-28');
    expect(iso(billingDate(new Date('2026-01-01T00:00:00Z'), 'week', 2, 3))).toBe('2026-02-12');
  });

  it('keeps the anchor day after any number of month steps', () => {
    fc.assert(
      fc.property(anchorArb, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 1000 }), (anchor, count, n) => {
        const d = billingDate(anchor, 'month', count, n);
        const days = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
        expect(d.getUTCDate()).toBe(Math.min(anchor.getUTCDate(), days));
        expect(d.getUTCHours()).toBe(anchor.getUTCHours());
      }),
    );
  });

  it('puts every instant in exactly one period; periods neither overlap nor leave gaps', () => {
    fc.assert(
      fc.property(
        anchorArb,
        fc.constantFrom(...intervals),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: -3_000_000_000_000, max: 3_000_000_000_000 }),
        (anchor, interval, count, offset) => {
          const t = new Date(anchor.getTime() + offset);
          const p = periodContaining(anchor, interval, count, t);
          expect(p.start.getTime()).toBeLessThanOrEqual(t.getTime());
          expect(t.getTime()).toBeLessThan(p.end.getTime());
          const next = periodContaining(anchor, interval, count, p.end);
          expect(next.start.getTime()).toBe(p.end.getTime());
          expect(next.index).toBe(p.index + 1);
          expect(nextBillingDate(anchor, interval, count, t).getTime()).toBe(p.end.getTime());
          expect(isBillingDate(anchor, interval, count, p.start)).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
