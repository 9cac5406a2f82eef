import { addInterval, billingDate, periodIndexAt, periodsBetween, Interval } from '../../src/billing/calendar';
import { isCalendarDate, overdueAt } from '../../src/billing/dueDate';

describe('calendar arguments are checked, with a message naming the bad one', () => {
  const a = new Date(Date.UTC(2026, 0, 31));
  const bad = new Date(Number.NaN);

  it('addInterval', () => {
    expect(() => addInterval(bad, 'day', 1)).toThrow(new RangeError('date is not a valid date'));
    expect(() => addInterval('2026-01-01' as unknown as Date, 'day', 1)).toThrow(new RangeError('date is not a valid date'));
    expect(() => addInterval(a, 'fortnight' as Interval, 1)).toThrow(new RangeError('unknown interval: fortnight'));
    expect(() => addInterval(a, 'day', 1.5)).toThrow(new RangeError('steps must be an integer, got 1.5'));
    expect(() => addInterval(a, 'month', 1, 0)).toThrow(new RangeError('anchorDay must be 1..31, got 0'));
    expect(() => addInterval(a, 'month', 1, 1.5)).toThrow(new RangeError('anchorDay must be 1..31, got 1.5'));
    expect(() => addInterval(a, 'month', 1, 32)).toThrow(new RangeError('anchorDay must be 1..31, got 32'));
    expect(addInterval(a, 'month', 1, 1).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(addInterval(a, 'month', 1, 31).toISOString()).toBe('2026-02-28T00:00:00.000Z');
  });

  it('billingDate', () => {
    expect(() => billingDate(a, 'fortnight' as Interval, 1, 1)).toThrow(new RangeError('unknown interval: fortnight'));
    expect(() => billingDate(a, 'month', 0, 1)).toThrow(new RangeError('interval count must be a positive integer, got 0'));
    expect(() => billingDate(a, 'month', 1, 0.5)).toThrow(new RangeError('n must be an integer, got 0.5'));
    expect(() => billingDate(a, 'month', 1, Number.POSITIVE_INFINITY)).toThrow(new RangeError('n must be an integer, got Infinity'));
  });

  it('periodIndexAt and periodsBetween', () => {
    expect(() => periodIndexAt(bad, 'month', 1, a)).toThrow(new RangeError('anchor is not a valid date'));
    expect(() => periodIndexAt(a, 'month', 1, bad)).toThrow(new RangeError('t is not a valid date'));
    expect(() => periodsBetween(a, 'month', 1, bad, a)).toThrow(new RangeError('from is not a valid date'));
    expect(() => periodsBetween(a, 'month', 1, a, bad)).toThrow(new RangeError('to is not a valid date'));
  });
});

describe('due dates', () => {
  it('are real calendar days with a four-digit year', () => {
    for (const s of ['2026-02-28', '2024-02-29', '0100-01-01', '9999-12-31']) expect([s, isCalendarDate(s)]).toEqual([s, true]);
    // Years 0-99 would be shifted to 19xx by Date.UTC: not the day written.
    for (const s of ['0050-01-01', '2026-02-29', '2026-02-30', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', 'x2026-01-01', '2026-01-01x', '2026-1-01']) {
      expect([s, isCalendarDate(s)]).toEqual([s, false]);
    }
  });

  it('are overdue from the next day; anything else is refused', () => {
    expect(new Date(overdueAt('2026-01-31')).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(() => overdueAt('31/01/2026')).toThrow(new Error('not a due date: 31/01/2026'));
    expect(() => overdueAt('x2026-01-31')).toThrow(new Error('not a due date: x2026-01-31'));
    expect(() => overdueAt('2026-01-31x')).toThrow(new Error('not a due date: 2026-01-31x'));
  });
});
