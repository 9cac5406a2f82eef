import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_BACKDATE_DAYS, PhaseShape, dateWindowViolation, validatePhases } from '../../src/billing/phases';
import type { Interval } from '../../src/billing/calendar';

const DAY = 86_400_000;
const d = (s: string) => new Date(s);
const rec = (interval: Interval, interval_count = 1) => ({ recurring: true, interval, interval_count });
const oneTime = { recurring: false, interval: null, interval_count: null };

const ok: PhaseShape[] = [
  { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-15T00:00:00Z'), items: [rec('month')] },
  { start: d('2026-01-15T00:00:00Z'), end: d('2026-03-15T00:00:00Z'), items: [rec('month'), rec('month'), oneTime] },
  { start: d('2026-03-15T00:00:00Z'), end: null, items: [rec('year')] },
];

describe('phase rules', () => {
  it('accepts contiguous phases with one cycle each and only the last open-ended', () => {
    expect(validatePhases(ok)).toBeNull();
    expect(validatePhases([])).toBeNull(); // "at least one phase" is checked by the caller
    expect(validatePhases([{ ...ok[0], items: [oneTime] }])).toBeNull();
  });

  it('names the broken rule and the phase', () => {
    expect(validatePhases([ok[0], { ...ok[1], items: [] }, ok[2]])).toEqual({ rule: 'phase_has_items', message: 'Phase 2 must have at least one item', index: 1 });
    expect(validatePhases([{ ...ok[0], items: [rec('month'), rec('year')] }])?.rule).toBe('same_interval');
    expect(validatePhases([{ ...ok[0], items: [rec('month', 1), rec('month', 3)] }])?.rule).toBe('same_interval');
    expect(validatePhases([ok[0], { ...ok[1], start: d('2026-01-10T00:00:00Z') }])).toMatchObject({ rule: 'no_overlap', index: 1 });
    expect(validatePhases([ok[0], { ...ok[1], start: d('2026-01-20T00:00:00Z') }])).toMatchObject({ rule: 'no_gaps', index: 1 });
    expect(validatePhases([{ ...ok[0], end: null }, ok[1]])).toMatchObject({ rule: 'one_active', index: 0 });
    expect(validatePhases([{ ...ok[0], end: ok[0].start }])).toMatchObject({ rule: 'no_overlap', index: 0 });
    expect(validatePhases([{ ...ok[0], end: d('2025-12-01T00:00:00Z') }])).toMatchObject({ rule: 'no_overlap', index: 0 });
    expect(validatePhases([ok[1], ok[0]])).toMatchObject({ rule: 'no_overlap', index: 1 });
    expect(validatePhases([ok[0], { ...ok[1], start: new Date(NaN) }])).toMatchObject({ rule: 'valid_dates', index: 1 });
    expect(validatePhases([{ ...ok[0], end: new Date('nope') }])).toMatchObject({ rule: 'valid_dates', index: 0 });
  });

  const intervalArb = fc.constantFrom<Interval>('day', 'week', 'month', 'year');
  const validArb = fc
    .tuple(
      fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }),
      fc.array(fc.tuple(fc.integer({ min: 1, max: 800 * DAY }), intervalArb, fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 4 }), fc.boolean()), { minLength: 1, maxLength: 6 }),
      fc.boolean(),
    )
    .map(([start, specs, lastOpen]) => {
      let at = start;
      return specs.map(([len, interval, count, n, withOneTime], i): PhaseShape => {
        const end = i === specs.length - 1 && lastOpen ? null : at + len;
        const phase = { start: new Date(at), end: end === null ? null : new Date(end), items: [...Array.from({ length: n }, () => rec(interval, count)), ...(withOneTime ? [oneTime] : [])] };
        if (end !== null) at = end;
        return phase;
      });
    });

  it('accepts every random contiguous schedule', () => {
    fc.assert(
      fc.property(validArb, (phases) => assert.equal(validatePhases(phases), null)),
      { numRuns: 3000 },
    );
  });

  it('finds any single defect at the right phase', () => {
    const defectArb = fc.constantFrom('gap', 'overlap', 'open', 'empty', 'mixed', 'reversed');
    fc.assert(
      fc.property(validArb, defectArb, fc.nat(), fc.integer({ min: 1, max: 10 * DAY }), (phases, defect, pick, shift) => {
        const p = phases.map((x) => ({ ...x, items: [...x.items] }));
        const i = pick % p.length;
        let expected: { rule: string; index: number } | null = null;
        if (defect === 'gap' || defect === 'overlap') {
          if (p.length < 2) return;
          const j = 1 + (pick % (p.length - 1));
          const prevEnd = p[j - 1].end!.getTime();
          p[j].start = new Date(defect === 'gap' ? prevEnd + shift : prevEnd - shift);
          // Rules are reported in phase order, so the boundary is found before anything else about j.
          expected = { rule: defect === 'gap' ? 'no_gaps' : 'no_overlap', index: j };
        } else if (defect === 'open') {
          if (p.length < 2) return;
          const j = pick % (p.length - 1);
          p[j].end = null;
          expected = { rule: 'one_active', index: j };
        } else if (defect === 'empty') {
          p[i].items = [];
          expected = { rule: 'phase_has_items', index: i };
        } else if (defect === 'mixed') {
          const first = p[i].items[0];
          p[i].items.push({ ...first, interval_count: (first.interval_count ?? 1) + 1 });
          expected = { rule: 'same_interval', index: i };
        } else {
          if (!p[i].end) return;
          p[i].end = new Date(p[i].start.getTime() - (shift % (2 * DAY)));
          expected = { rule: 'no_overlap', index: i };
        }
        const v = validatePhases(p);
        assert.ok(v, `expected ${defect} to be found`);
        assert.deepEqual({ rule: v.rule, index: v.index }, expected);
        assert.ok(v.message.length > 0);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('date window', () => {
  const now = d('2026-06-01T00:00:00Z');
  const phase = (start: string, end: string | null = null) => ({ start: d(start), end: end ? d(end) : null });

  it('accepts a start up to a year back and dates up to a hundred years ahead', () => {
    expect(dateWindowViolation([phase('2025-05-31T00:00:00Z')], null, now)).toBeNull();
    expect(dateWindowViolation([phase('2026-06-01T00:00:00Z', '2125-01-01T00:00:00Z')], d('2120-01-01T00:00:00Z'), now)).toBeNull();
    expect(dateWindowViolation([phase('2026-07-01T00:00:00Z')], d('1990-01-01T00:00:00Z'), now)).toBeNull();
  });

  it('refuses a start further back than MAX_BACKDATE_DAYS, and dates a century away', () => {
    const back = new Date(now.getTime() - (MAX_BACKDATE_DAYS + 1) * DAY).toISOString();
    expect(dateWindowViolation([phase(back)], null, now)?.param).toBe('phases[][start_date]');
    expect(dateWindowViolation([phase('1000-01-01T00:00:00Z')], null, now)?.param).toBe('phases[][start_date]');
    expect(dateWindowViolation([phase('2026-07-01T00:00:00Z', '9999-01-01T00:00:00Z')], null, now)?.param).toBe('phases[][end_date]');
    expect(dateWindowViolation([phase('2200-01-01T00:00:00Z')], null, now)?.param).toBe('phases[][start_date]');
    expect(dateWindowViolation([phase('2026-07-01T00:00:00Z')], d('0100-01-01T00:00:00Z'), now)?.param).toBe('billing_cycle_anchor');
  });
});
