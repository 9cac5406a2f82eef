import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  addInterval,
  billingDate,
  billingDateOnOrAfter,
  daysInMonth,
  Interval,
  isBillingDate,
  nextBillingDate,
  periodContaining,
  periodsBetween,
} from '../../src/billing/calendar';

const DAY = 86_400_000;
const iso = (d: Date) => d.toISOString().slice(0, 10);
const intervals: Interval[] = ['day', 'week', 'month', 'year'];
const anchorArb = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2090-01-01T00:00:00Z'), noInvalidDate: true });
const intervalArb = fc.constantFrom(...intervals);
const lastDay = (d: Date) => daysInMonth(d.getUTCFullYear(), d.getUTCMonth());
const timeOfDay = (d: Date) => ((d.getTime() % DAY) + DAY) % DAY;

describe('billing calendar: concrete dates', () => {
  it('steps monthly from Jan 31 with month-end clamping that never drifts', () => {
    const anchor = new Date('2026-01-31T09:30:00Z');
    const dates = Array.from({ length: 13 }, (_, n) => iso(billingDate(anchor, 'month', 1, n)));
    expect(dates).toEqual([
      '2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31',
      '2026-08-31', '2026-09-30', '2026-10-31', '2026-11-30', '2026-12-31', '2027-01-31',
    ]);
    expect(billingDate(anchor, 'month', 1, 1).toISOString()).toBe('2026-02-28T09:30:00.000Z');
    expect(iso(billingDate(new Date('2028-01-31T00:00:00Z'), 'month', 1, 1))).toBe('2028-02-29');
    expect(iso(billingDate(new Date('2028-01-31T00:00:00Z'), 'month', 1, 2))).toBe('2028-03-31');
    expect(iso(billingDate(new Date('2028-02-29T00:00:00Z'), 'year', 1, 1))).toBe('2029-02-28');
    expect(iso(billingDate(new Date('2028-02-29T00:00:00Z'), 'year', 1, 4))).toBe('2032-02-29');
    expect(iso(billingDate(new Date('2026-08-31T00:00:00Z'), 'month', 6, 1))).toBe('2027-02-28');
    expect(iso(billingDate(new Date('2026-01-01T00:00:00Z'), 'week', 2, 3))).toBe('2026-02-12');
    expect(iso(billingDate(new Date('2026-03-31T00:00:00Z'), 'month', 1, -1))).toBe('2026-02-28');
    expect(iso(billingDate(new Date('2026-03-31T00:00:00Z'), 'month', 1, -13))).toBe('2025-02-28');
    expect(iso(billingDate(new Date('2026-03-31T00:00:00Z'), 'month', 3, -1))).toBe('2025-12-31');
  });

  it('follows the anchor day when stepping iteratively with addInterval', () => {
    let d = new Date('2026-01-31T12:00:00Z');
    const seen = [iso(d)];
    for (let i = 0; i < 4; i++) {
      d = addInterval(d, 'month', 1, 31);
      seen.push(iso(d));
    }
    expect(seen).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31']);
    // Without the anchor day, stepping from a clamped date drifts: this is why billingDate exists.
    expect(iso(addInterval(new Date('2026-02-28T00:00:00Z'), 'month', 1))).toBe('2026-03-28');
    expect(iso(addInterval(new Date('2028-01-31T00:00:00Z'), 'year', 1, 29))).toBe('2029-01-29');
    expect(addInterval(new Date('2026-01-01T05:06:07.089Z'), 'day', -1).toISOString()).toBe('2025-12-31T05:06:07.089Z');
  });

  it('does not shift years 0-99 into the 1900s', () => {
    const early = new Date('0050-01-31T00:00:00Z');
    expect(billingDate(early, 'month', 1, 1).toISOString()).toBe('0050-02-28T00:00:00.000Z');
    expect(billingDate(early, 'year', 1, 1).toISOString()).toBe('0051-01-31T00:00:00.000Z');
    expect(daysInMonth(4, 1)).toBe(29);
    expect(daysInMonth(1900, 1)).toBe(28);
    expect(daysInMonth(2000, 1)).toBe(29);
  });

  it('finds periods and next billing dates', () => {
    const anchor = new Date('2026-01-31T00:00:00Z');
    const p = periodContaining(anchor, 'month', 1, new Date('2026-03-15T00:00:00Z'));
    expect([p.start.toISOString(), p.end.toISOString(), p.index]).toEqual(['2026-02-28T00:00:00.000Z', '2026-03-31T00:00:00.000Z', 1]);
    const before = periodContaining(anchor, 'month', 1, new Date('2025-12-31T00:00:00Z'));
    expect([iso(before.start), iso(before.end), before.index]).toEqual(['2025-12-31', '2026-01-31', -1]);
    expect(nextBillingDate(anchor, 'month', 1, anchor).toISOString()).toBe('2026-02-28T00:00:00.000Z');
    expect(nextBillingDate(anchor, 'month', 1, new Date(anchor.getTime() - 1)).toISOString()).toBe(anchor.toISOString());
    expect(billingDateOnOrAfter(anchor, 'month', 1, anchor).toISOString()).toBe(anchor.toISOString());
    expect(isBillingDate(anchor, 'month', 1, new Date('2026-04-30T00:00:00Z'))).toBe(true);
    expect(isBillingDate(anchor, 'month', 1, new Date('2026-04-30T00:00:00.001Z'))).toBe(false);
    expect(
      periodsBetween(anchor, 'month', 1, new Date('2026-02-15T00:00:00Z'), new Date('2026-04-30T00:00:00Z')).map((q) => [iso(q.start), iso(q.end), q.index]),
    ).toEqual([
      ['2026-01-31', '2026-02-28', 0],
      ['2026-02-28', '2026-03-31', 1],
      ['2026-03-31', '2026-04-30', 2],
    ]);
    expect(periodsBetween(anchor, 'month', 1, anchor, anchor)).toEqual([]);
  });

  it('refuses an invalid cycle or date', () => {
    const a = new Date('2026-01-01T00:00:00Z');
    expect(() => billingDate(a, 'month', 0, 1)).toThrow(RangeError);
    expect(() => billingDate(a, 'month', 1.5, 1)).toThrow(RangeError);
    expect(() => billingDate(a, 'fortnight' as Interval, 1, 1)).toThrow(RangeError);
    expect(() => billingDate(a, 'month', 1, 0.5)).toThrow(RangeError);
    expect(() => periodContaining(new Date(NaN), 'day', 1, a)).toThrow(RangeError);
    expect(() => addInterval(a, 'month', 1, 32)).toThrow(RangeError);
  });
});

describe('billing calendar: properties', () => {
  it('keeps the anchor day (clamped) and time of day after any number of month or year steps', () => {
    fc.assert(
      fc.property(anchorArb, fc.constantFrom<Interval>('month', 'year'), fc.integer({ min: 1, max: 12 }), fc.integer({ min: -1000, max: 1000 }), (anchor, interval, count, n) => {
        const d = billingDate(anchor, interval, count, n);
        assert.equal(d.getUTCDate(), Math.min(anchor.getUTCDate(), lastDay(d)));
        assert.equal(timeOfDay(d), timeOfDay(anchor));
        const months = (d.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + d.getUTCMonth() - anchor.getUTCMonth();
        assert.equal(months, n * count * (interval === 'year' ? 12 : 1));
      }),
      { numRuns: 5000 },
    );
  });

  it('day and week periods have a fixed length', () => {
    fc.assert(
      fc.property(anchorArb, fc.constantFrom<Interval>('day', 'week'), fc.integer({ min: 1, max: 30 }), fc.integer({ min: -5000, max: 5000 }), (anchor, interval, count, n) => {
        const len = count * (interval === 'week' ? 7 : 1) * DAY;
        assert.equal(billingDate(anchor, interval, count, n).getTime() - anchor.getTime(), n * len);
      }),
      { numRuns: 3000 },
    );
  });

  it('iterative addInterval with the anchor day never drifts from billingDate over 1000 steps', () => {
    fc.assert(
      fc.property(anchorArb, intervalArb, fc.integer({ min: 1, max: 3 }), (anchor, interval, count) => {
        let d = anchor;
        for (let n = 1; n <= 1000; n++) {
          d = addInterval(d, interval, count, anchor.getUTCDate());
          assert.equal(d.getTime(), billingDate(anchor, interval, count, n).getTime());
        }
      }),
      { numRuns: 100 },
    );
  });

  it('puts every instant in exactly one period; periods neither overlap nor leave gaps', () => {
    fc.assert(
      fc.property(anchorArb, intervalArb, fc.integer({ min: 1, max: 6 }), fc.integer({ min: -3_000_000_000_000, max: 3_000_000_000_000 }), (anchor, interval, count, offset) => {
        const t = new Date(anchor.getTime() + offset);
        const p = periodContaining(anchor, interval, count, t);
        assert.ok(p.start.getTime() <= t.getTime() && t.getTime() < p.end.getTime());
        assert.equal(p.start.getTime(), billingDate(anchor, interval, count, p.index).getTime());
        // The neighbours share their boundaries with p, and contain neither t nor each other.
        const next = periodContaining(anchor, interval, count, p.end);
        assert.equal(next.start.getTime(), p.end.getTime());
        assert.equal(next.index, p.index + 1);
        const prev = periodContaining(anchor, interval, count, new Date(p.start.getTime() - 1));
        assert.equal(prev.end.getTime(), p.start.getTime());
        assert.equal(prev.index, p.index - 1);
        assert.equal(nextBillingDate(anchor, interval, count, t).getTime(), p.end.getTime());
        assert.ok(isBillingDate(anchor, interval, count, p.start));
        assert.equal(isBillingDate(anchor, interval, count, t), t.getTime() === p.start.getTime());
        const onOrAfter = billingDateOnOrAfter(anchor, interval, count, t).getTime();
        assert.equal(onOrAfter, t.getTime() === p.start.getTime() ? t.getTime() : p.end.getTime());
      }),
      { numRuns: 5000 },
    );
  });

  it('periodsBetween tiles [from, to) with consecutive periods', () => {
    fc.assert(
      fc.property(
        anchorArb,
        intervalArb,
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: -400 * DAY, max: 400 * DAY }),
        fc.integer({ min: 0, max: 800 * DAY }),
        (anchor, interval, count, fromOffset, length) => {
          const from = new Date(anchor.getTime() + fromOffset);
          const to = new Date(from.getTime() + length);
          const periods = periodsBetween(anchor, interval, count, from, to);
          if (length === 0) return assert.equal(periods.length, 0);
          assert.ok(periods.length >= 1);
          assert.ok(periods[0].start <= from && from < periods[0].end);
          const last = periods[periods.length - 1];
          assert.ok(last.start < to && to <= last.end);
          for (let i = 1; i < periods.length; i++) {
            assert.equal(periods[i].start.getTime(), periods[i - 1].end.getTime());
            assert.equal(periods[i].index, periods[i - 1].index + 1);
          }
          for (const p of periods) assert.ok(p.start < p.end);
        },
      ),
      { numRuns: 1500 },
    );
  });
});
