import fc from 'fast-check';
import { dayAfter, isCalendarDate, overdueAt } from '../../src/billing/dueDate';

describe('due dates', () => {
  it('accept only real calendar days', () => {
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2027-02-29')).toBe(false);
    expect(isCalendarDate('2026-13-01')).toBe(false);
    expect(isCalendarDate('2026-1-01')).toBe(false);
    expect(isCalendarDate('2026-12-31T00:00:00Z')).toBe(false);
  });

  it('are overdue from the next midnight UTC', () => {
    expect(new Date(overdueAt('2026-12-31')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(new Date(overdueAt('2028-02-28')).toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('round-trip through dayAfter for any instant', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }), fc.integer({ min: 0, max: 400 }), (d, n) => {
        const due = dayAfter(d, n);
        expect(isCalendarDate(due)).toBe(true);
        const at = overdueAt(due);
        expect(at - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())).toBe((n + 1) * 86_400_000);
      }),
    );
  });
});
