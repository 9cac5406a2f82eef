import { dateWindowViolation, PhaseShape, validatePhases } from '../../src/billing/phases';

const d = (s: string) => new Date(s);
const m = { recurring: true, interval: 'month' as const, interval_count: 1 };
const phase = (start: string, end: string | null, items: PhaseShape['items'] = [m]): PhaseShape => ({ start: d(start), end: end === null ? null : d(end), items });
const first = phase('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z');

describe('validatePhases messages number phases from 1', () => {
  it.each([
    [[first, phase('2026-02-01T00:00:00Z', 'nope')], 'valid_dates', 'Phase 2 must have valid start and end dates', 1],
    [[first, phase('2026-02-01T00:00:00Z', null, [])], 'phase_has_items', 'Phase 2 must have at least one item', 1],
    [[first, phase('2026-02-01T00:00:00Z', null, [m, { ...m, interval: 'year' }])], 'same_interval', 'All recurring items of phase 2 must share the same interval', 1],
    [[first, phase('2026-02-01T00:00:00Z', '2026-02-01T00:00:00Z')], 'no_overlap', 'Phase 2 must end after it starts', 1],
    [[first, phase('2026-02-01T00:00:00Z', null), phase('2026-03-01T00:00:00Z', null)], 'one_active', 'Phase 2 has no end date, so phase 3 would be active at the same time', 1],
    [[first, phase('2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z'), phase('2026-02-15T00:00:00Z', null)], 'no_overlap', 'Phase 3 starts before phase 2 ends', 2],
    [[first, phase('2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z'), phase('2026-03-15T00:00:00Z', null)], 'no_gaps', 'Phase 3 must start when phase 2 ends', 2],
    [[first, phase('nope', null)], 'valid_dates', 'Phase 2 must have valid start and end dates', 1],
  ])('%#: %s', (phases, rule, message, index) => {
    expect(validatePhases(phases as PhaseShape[])).toEqual({ rule, message, index });
  });
});

describe('dateWindowViolation messages', () => {
  const now = d('2026-06-01T00:00:00Z');
  const span = 100 * 365.2425 * 86_400_000;
  it('name the limit broken', () => {
    expect(dateWindowViolation([{ start: d('2025-01-01T00:00:00Z'), end: null }], null, now)).toEqual({ param: 'phases[][start_date]', message: 'A phase may start at most 366 days in the past' });
    expect(dateWindowViolation([{ start: new Date(now.getTime() + span + 1), end: null }], null, now)).toEqual({ param: 'phases[][start_date]', message: 'Phase dates must be within 100 years from now' });
    expect(dateWindowViolation([{ start: now, end: new Date(now.getTime() + span + 1) }], null, now)).toEqual({ param: 'phases[][end_date]', message: 'Phase dates must be within 100 years from now' });
    expect(dateWindowViolation([{ start: now, end: null }], new Date(now.getTime() - span - 1), now)).toEqual({ param: 'billing_cycle_anchor', message: 'The billing cycle anchor must be within 100 years from now' });
  });

  it('allow dates exactly at the limit', () => {
    expect(dateWindowViolation([{ start: now, end: new Date(now.getTime() + span) }], new Date(now.getTime() - span), now)).toBeNull();
  });
});
