import fc from 'fast-check';
import Decimal from 'decimal.js';
import { BillingPlan, PlanItem, PlanPhase, ProrationBehavior, invoicedCharges, planCharges, nextWakeAfter, activePhaseIndex, statusAt } from '../../src/billing/schedule';
import { Interval, isBillingDate } from '../../src/billing/calendar';
import { validatePhases } from '../../src/billing/phases';

const d = (s: string) => new Date(s);
const item = (price_id: string, unit: string, interval: Interval | null = 'month', count = 1, quantity = 1): PlanItem => ({
  price_id,
  product_id: 'prod_' + price_id,
  product_name: 'Product ' + price_id,
  quantity,
  unit_amount: unit,
  recurring: interval !== null,
  interval,
  interval_count: interval ? count : null,
});
const summary = (plan: BillingPlan, until: string) =>
  invoicedCharges(plan, d(until)).map((c) => [c.at.toISOString().slice(0, 10), c.total]);

function threePhases(behavior: ProrationBehavior): BillingPlan {
  return {
    anchor: null,
    behavior,
    phases: [
      { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-15T00:00:00Z'), items: [item('trial', '0.00')] },
      { start: d('2026-01-15T00:00:00Z'), end: d('2026-03-15T00:00:00Z'), items: [item('monthly', '10.00')] },
      { start: d('2026-03-15T00:00:00Z'), end: null, items: [item('yearly', '100.00', 'year')] },
    ],
  };
}

describe('subscription billing plan', () => {
  it('bills a monthly subscription started on Jan 31 on the clamped dates', () => {
    const plan: BillingPlan = { anchor: null, behavior: 'create_prorations', phases: [{ start: d('2026-01-31T10:00:00Z'), end: null, items: [item('m', '25.00')] }] };
    const dates = invoicedCharges(plan, d('2027-02-27T00:00:00Z')).map((c) => c.at.toISOString().slice(0, 10));
    expect(dates).toEqual([
      '2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31',
      '2026-08-31', '2026-09-30', '2026-10-31', '2026-11-30', '2026-12-31', '2027-01-31',
    ]);
    const leap: BillingPlan = { ...plan, phases: [{ ...plan.phases[0], start: d('2028-01-31T10:00:00Z') }] };
    expect(invoicedCharges(leap, d('2028-03-01T00:00:00Z')).map((c) => c.at.toISOString().slice(0, 10))).toEqual(['2028-01-31', '2028-02-29']);
  });

  it('bills the three-phase schedule under create_prorations', () => {
    expect(summary(threePhases('create_prorations'), '2027-01-01T00:00:00Z')).toEqual([
      ['2026-01-15', '5.48'], // 17 of 31 days of $10
      ['2026-02-01', '10.00'],
      ['2026-03-01', '10.00'],
      ['2026-03-15', '74.52'], // 292/365 of $100 = 80.00, less 17/31 of $10 unused = 5.48
      ['2027-01-01', '100.00'],
    ]);
  });

  it('bills the three-phase schedule under always_invoice', () => {
    expect(summary(threePhases('always_invoice'), '2027-03-15T00:00:00Z')).toEqual([
      ['2026-01-15', '10.00'],
      ['2026-02-15', '10.00'],
      ['2026-03-15', '100.00'],
      ['2027-03-15', '100.00'],
    ]);
  });

  it('bills the three-phase schedule under none', () => {
    expect(summary(threePhases('none'), '2027-01-01T00:00:00Z')).toEqual([
      ['2026-02-01', '10.00'],
      ['2026-03-01', '10.00'],
      ['2027-01-01', '100.00'],
    ]);
  });

  it('credits unused time and charges the rest of the cycle on a mid-cycle change, to the cent', () => {
    const plan: BillingPlan = {
      anchor: null,
      behavior: 'create_prorations',
      phases: [
        { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-11T00:00:00Z'), items: [item('basic', '30.00')] },
        { start: d('2026-01-11T00:00:00Z'), end: null, items: [item('pro', '60.00')] },
      ],
    };
    const change = planCharges(plan, d('2026-01-11T00:00:00Z'))[1];
    expect(change.kind).toBe('phase_change');
    expect(change.lines.map((l) => [l.price_id, l.amount])).toEqual([
      ['basic', '-20.32'], // 21/31 of $30
      ['pro', '40.65'], // 21/31 of $60
    ]);
    expect(change.total).toBe('20.33');
    expect(change.periodEnd?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
  });

  it('carries a negative net as credit to the next invoice', () => {
    const plan: BillingPlan = {
      anchor: null,
      behavior: 'create_prorations',
      phases: [
        { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-11T00:00:00Z'), items: [item('pro', '60.00')] },
        { start: d('2026-01-11T00:00:00Z'), end: null, items: [item('basic', '30.00')] },
      ],
    };
    const charges = planCharges(plan, d('2026-02-01T00:00:00Z'));
    expect(charges.map((c) => [c.kind, c.total, c.creditCarried])).toEqual([
      ['start', '60.00', '0.00'],
      ['phase_change', '0.00', '20.33'], // -40.65 (21/31 of $60) + 20.32 (21/31 of $30)
      ['renewal', '9.67', '0.00'],
    ]);
    expect(charges[2].lines.map((l) => l.amount)).toEqual(['30.00', '-20.33']);
  });

  it('uses billing_cycle_anchor for the first cycle', () => {
    const plan: BillingPlan = { anchor: d('2026-02-01T00:00:00Z'), behavior: 'create_prorations', phases: [{ start: d('2026-01-22T00:00:00Z'), end: null, items: [item('m', '31.00')] }] };
    expect(summary(plan, '2026-03-01T00:00:00Z')).toEqual([
      ['2026-01-22', '10.00'], // 10 of 31 days
      ['2026-02-01', '31.00'],
      ['2026-03-01', '31.00'],
    ]);
    expect(summary({ ...plan, behavior: 'always_invoice' }, '2026-02-01T00:00:00Z')).toEqual([['2026-01-22', '31.00'], ['2026-02-01', '31.00']]);
    expect(summary({ ...plan, behavior: 'none' }, '2026-02-01T00:00:00Z')).toEqual([['2026-02-01', '31.00']]);
  });

  it('stops at cancellation and at the last phase end; knows the phase and status at any time', () => {
    const plan: BillingPlan = threePhases('create_prorations');
    expect(activePhaseIndex(plan, d('2026-01-20T00:00:00Z'))).toBe(1);
    expect(statusAt(plan, d('2025-12-31T00:00:00Z'))).toBe('scheduled');
    const canceled = { ...plan, canceledAt: d('2026-02-10T00:00:00Z') };
    expect(summary(canceled, '2030-01-01T00:00:00Z').map(([date]) => date)).toEqual(['2026-01-15', '2026-02-01']);
    expect(statusAt(canceled, d('2026-03-01T00:00:00Z'))).toBe('canceled');
    const ending: BillingPlan = { ...plan, phases: [plan.phases[0], { ...plan.phases[1] }] };
    expect(statusAt(ending, d('2026-03-15T00:00:00Z'))).toBe('ended');
    expect(nextWakeAfter(ending, d('2026-03-01T00:00:00Z'))?.toISOString()).toBe('2026-03-15T00:00:00.000Z');
    expect(nextWakeAfter(ending, d('2026-03-15T00:00:00Z'))).toBeNull();
  });

  it('enforces the five phase rules', () => {
    const ok = threePhases('none').phases;
    expect(validatePhases(ok)).toBeNull();
    expect(validatePhases([{ ...ok[0], items: [] }])?.rule).toBe('phase_has_items');
    expect(validatePhases([{ ...ok[0], items: [item('a', '1.00', 'month'), item('b', '1.00', 'year')] }])?.rule).toBe('same_interval');
    expect(validatePhases([ok[0], { ...ok[1], start: d('2026-01-10T00:00:00Z') }])?.rule).toBe('no_overlap');
    expect(validatePhases([ok[0], { ...ok[1], start: d('2026-01-20T00:00:00Z') }])?.rule).toBe('no_gaps');
    expect(validatePhases([{ ...ok[0], end: null }, ok[1]])?.rule).toBe('one_active');
    expect(validatePhases([{ ...ok[0], end: ok[0].start }])?.rule).toBe('no_overlap');
  });
});

describe('billing plan properties', () => {
  const intervalArb = fc.constantFrom<Interval>('day', 'week', 'month', 'year');
  const planArb = fc
    .record({
      start: fc.date({ min: new Date('2024-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }),
      lengths: fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 3 }),
      intervals: fc.array(fc.tuple(intervalArb, fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 50000 })), { minLength: 3, maxLength: 3 }),
      behavior: fc.constantFrom<ProrationBehavior>('create_prorations', 'always_invoice', 'none'),
      anchorOffsetDays: fc.option(fc.integer({ min: -20, max: 20 })),
      lastOpen: fc.boolean(),
    })
    .map(({ start, lengths, intervals, behavior, anchorOffsetDays, lastOpen }) => {
      const phases: PlanPhase[] = [];
      let at = start;
      lengths.forEach((len, i) => {
        const end = i === lengths.length - 1 && lastOpen ? null : new Date(at.getTime() + len * 86_400_000);
        const [interval, count, cents] = intervals[i];
        phases.push({ start: at, end, items: [item(`p${i}`, new Decimal(cents).div(100).toFixed(2), interval, count, 1 + (cents % 3))] });
        if (end) at = end;
      });
      const anchor = anchorOffsetDays === null ? null : new Date(start.getTime() + anchorOffsetDays * 86_400_000);
      return { anchor, behavior, phases } as BillingPlan;
    });

  it('never bills a period twice, leaves no gap between renewals, and never bills below zero', () => {
    fc.assert(
      fc.property(planArb, fc.integer({ min: 30, max: 900 }), (plan, days) => {
        const until = new Date(plan.phases[0].start.getTime() + days * 86_400_000);
        const charges = planCharges(plan, until);
        expect(new Set(charges.map((c) => c.key)).size).toBe(charges.length);
        for (const c of charges) {
          expect(new Decimal(c.total).gte(0)).toBe(true);
          expect(new Decimal(c.creditCarried).gte(0)).toBe(true);
          expect(c.at.getTime()).toBeLessThanOrEqual(until.getTime());
        }
        for (let i = 1; i < charges.length; i++) expect(charges[i].at.getTime()).toBeGreaterThanOrEqual(charges[i - 1].at.getTime());
        // Within a phase, each renewal starts where the previous billed period ended.
        const byPhase = new Map<number, typeof charges>();
        for (const c of charges) byPhase.set(c.phaseIndex, [...(byPhase.get(c.phaseIndex) ?? []), c]);
        for (const list of byPhase.values()) {
          for (let i = 1; i < list.length; i++) {
            if (list[i].kind === 'renewal' && list[i - 1].periodEnd) expect(list[i].periodStart.getTime()).toBe(list[i - 1].periodEnd!.getTime());
          }
        }
      }),
      { numRuns: 600 },
    );
  });

  it('is stable: the charges up to an earlier instant are a prefix of those up to a later one', () => {
    fc.assert(
      fc.property(planArb, fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 400 }), (plan, a, extra) => {
        const t1 = new Date(plan.phases[0].start.getTime() + a * 86_400_000);
        const t2 = new Date(t1.getTime() + extra * 86_400_000);
        const early = planCharges(plan, t1);
        const late = planCharges(plan, t2);
        expect(late.slice(0, early.length)).toEqual(early);
      }),
      { numRuns: 400 },
    );
  });

  it('prorated start plus the rest of its cycle equals what the cycle would cost', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2024-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }), fc.integer({ min: 1, max: 27 }), fc.integer({ min: 1, max: 100000 }), (anchor, offsetDays, cents) => {
        const unit = new Decimal(cents).div(100).toFixed(2);
        const start = new Date(anchor.getTime() + offsetDays * 86_400_000);
        const prorated = planCharges({ anchor, behavior: 'create_prorations', phases: [{ start, end: null, items: [item('x', unit)] }] }, start)[0];
        const before = planCharges({ anchor, behavior: 'create_prorations', phases: [{ start: anchor, end: start, items: [item('x', unit)] }, { start, end: null, items: [item('x', unit)] }] }, start);
        // Billed for the whole cycle then switched to the same price: the credit equals the prorated charge.
        const change = before.find((c) => c.kind === 'phase_change');
        if (prorated && change) {
          const [credit, charge] = change.lines.map((l) => new Decimal(l.amount));
          expect(credit.neg().toFixed(2)).toBe(charge.toFixed(2));
          expect(charge.toFixed(2)).toBe(prorated.total);
          expect(new Decimal(prorated.total).lte(unit)).toBe(true);
        }
        expect(isBillingDate(anchor, 'month', 1, anchor)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
