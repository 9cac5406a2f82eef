import assert from 'node:assert/strict';
import fc from 'fast-check';
import Decimal from 'decimal.js';
import {
  BillingPlan,
  Charge,
  PlanItem,
  PlanPhase,
  ProrationBehavior,
  activePhaseIndex,
  invoicedCharges,
  nextBillingAfter,
  nextWakeAfter,
  planBilling,
  planCharges,
  stateAt,
  statusAt,
  upcomingCharges,
  validatePhases,
} from '../../src/billing/schedule';
import { Interval, isBillingDate, periodsBetween } from '../../src/billing/calendar';
import { multiplyAmount } from '../../src/billing/money';
import { initialCharge } from '../../src/billing/proration';

const DAY = 86_400_000;
const d = (s: string) => new Date(s);
const day = (x: Date) => x.toISOString().slice(0, 10);
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
const summary = (plan: BillingPlan, until: string) => invoicedCharges(plan, d(until)).map((c) => [day(c.at), c.total]);

/** The brief's scenario: a 14-day free trial from 2026-01-01, $10/month for 2 months, then $100/year. */
const scenarioPhases = (): PlanPhase[] => [
  { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-15T00:00:00Z'), items: [item('trial', '0.00')] },
  { start: d('2026-01-15T00:00:00Z'), end: d('2026-03-15T00:00:00Z'), items: [item('monthly', '10.00')] },
  { start: d('2026-03-15T00:00:00Z'), end: null, items: [item('yearly', '100.00', 'year')] },
];
const threePhases = (behavior: ProrationBehavior): BillingPlan => ({ anchor: null, behavior, phases: scenarioPhases() });

/** Invoices of the scenario as [billing date, period start, period end, total, lines as [price, unit, amount, description]]. */
function scenarioInvoices(behavior: ProrationBehavior) {
  return planBilling({ phases: scenarioPhases(), prorationBehavior: behavior, from: d('2025-01-01T00:00:00Z'), to: d('2028-06-01T00:00:00Z') }).map((inv) => [
    day(inv.billingDate),
    `${day(inv.periodStart)}..${inv.periodEnd ? day(inv.periodEnd) : ''}`,
    inv.total,
    inv.lines.map((l) => [l.price_id, l.unit_amount, l.amount, l.description]),
  ]);
}

describe('the three-phase scenario (free trial, $10/month x 2, then $100/year)', () => {
  it('create_prorations: prorated start of each paid phase, credit for the unused month', () => {
    expect(scenarioInvoices('create_prorations')).toEqual([
      // 17 of the 31 days of January (billing dates step from Jan 1, the subscription's start).
      ['2026-01-15', '2026-01-15..2026-02-01', '5.48', [['monthly', '5.48', '5.48', 'Prorated subscription period']]],
      ['2026-02-01', '2026-02-01..2026-03-01', '10.00', [['monthly', '10.00', '10.00', 'Subscription period']]],
      ['2026-03-01', '2026-03-01..2026-04-01', '10.00', [['monthly', '10.00', '10.00', 'Subscription period']]],
      // 292 of 365 days of the year to 2027-01-01 = 80.00, less 17/31 of March's $10 = 5.48.
      [
        '2026-03-15',
        '2026-03-15..2027-01-01',
        '74.52',
        [
          ['monthly', '-5.48', '-5.48', 'Unused time before the phase change'],
          ['yearly', '80.00', '80.00', 'Prorated subscription period'],
        ],
      ],
      ['2027-01-01', '2027-01-01..2028-01-01', '100.00', [['yearly', '100.00', '100.00', 'Subscription period']]],
      ['2028-01-01', '2028-01-01..2029-01-01', '100.00', [['yearly', '100.00', '100.00', 'Subscription period']]],
    ]);
  });

  it('always_invoice: each paid phase bills a full period at its start and renews from there', () => {
    expect(scenarioInvoices('always_invoice')).toEqual([
      ['2026-01-15', '2026-01-15..2026-02-15', '10.00', [['monthly', '10.00', '10.00', 'Subscription period']]],
      ['2026-02-15', '2026-02-15..2026-03-15', '10.00', [['monthly', '10.00', '10.00', 'Subscription period']]],
      ['2026-03-15', '2026-03-15..2027-03-15', '100.00', [['yearly', '100.00', '100.00', 'Subscription period']]],
      ['2027-03-15', '2027-03-15..2028-03-15', '100.00', [['yearly', '100.00', '100.00', 'Subscription period']]],
      ['2028-03-15', '2028-03-15..2029-03-15', '100.00', [['yearly', '100.00', '100.00', 'Subscription period']]],
    ]);
  });

  it('none: nothing until the next billing date of each phase, no credit', () => {
    expect(scenarioInvoices('none')).toEqual([
      ['2026-02-01', '2026-02-01..2026-03-01', '10.00', [['monthly', '10.00', '10.00', 'Subscription period']]],
      ['2026-03-01', '2026-03-01..2026-04-01', '10.00', [['monthly', '10.00', '10.00', 'Subscription period']]],
      ['2027-01-01', '2027-01-01..2028-01-01', '100.00', [['yearly', '100.00', '100.00', 'Subscription period']]],
      ['2028-01-01', '2028-01-01..2029-01-01', '100.00', [['yearly', '100.00', '100.00', 'Subscription period']]],
    ]);
  });

  it('the same through invoicedCharges, with keys, kinds and the next billing date at any time', () => {
    const plan = threePhases('create_prorations');
    const charges = invoicedCharges(plan, d('2027-01-01T00:00:00Z'));
    expect(charges.map((c) => [c.key, c.kind, c.total])).toEqual([
      ['1:2026-01-15T00:00:00.000Z', 'phase_change', '5.48'],
      ['1:2026-02-01T00:00:00.000Z', 'renewal', '10.00'],
      ['1:2026-03-01T00:00:00.000Z', 'renewal', '10.00'],
      ['2:2026-03-15T00:00:00.000Z', 'phase_change', '74.52'],
      ['2:2027-01-01T00:00:00.000Z', 'renewal', '100.00'],
    ]);
    expect(nextBillingAfter(plan, d('2025-12-01T00:00:00Z'))?.toISOString()).toBe('2026-01-15T00:00:00.000Z');
    expect(nextBillingAfter(plan, d('2026-01-15T00:00:00Z'))?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(nextBillingAfter(plan, d('2026-03-20T00:00:00Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(nextBillingAfter(threePhases('always_invoice'), d('2026-03-20T00:00:00Z'))?.toISOString()).toBe('2027-03-15T00:00:00.000Z');
    expect(statusAt(plan, d('2025-12-31T00:00:00Z'))).toBe('scheduled');
    expect(statusAt(plan, d('2026-01-01T00:00:00Z'))).toBe('active');
    expect(activePhaseIndex(plan, d('2026-01-14T23:59:59.999Z'))).toBe(0);
    expect(activePhaseIndex(plan, d('2026-01-15T00:00:00Z'))).toBe(1);
    expect(activePhaseIndex(plan, d('2030-01-01T00:00:00Z'))).toBe(2);
  });
});

describe('subscription billing plan', () => {
  it('bills a monthly subscription started on Jan 31 on the clamped dates', () => {
    const plan: BillingPlan = { anchor: null, behavior: 'create_prorations', phases: [{ start: d('2026-01-31T10:00:00Z'), end: null, items: [item('m', '25.00')] }] };
    const dates = invoicedCharges(plan, d('2027-02-27T00:00:00Z')).map((c) => day(c.at));
    expect(dates).toEqual([
      '2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31', '2026-06-30', '2026-07-31',
      '2026-08-31', '2026-09-30', '2026-10-31', '2026-11-30', '2026-12-31', '2027-01-31',
    ]);
    const leap: BillingPlan = { ...plan, phases: [{ ...plan.phases[0], start: d('2028-01-31T10:00:00Z') }] };
    expect(invoicedCharges(leap, d('2028-03-01T00:00:00Z')).map((c) => day(c.at))).toEqual(['2028-01-31', '2028-02-29']);
    expect(invoicedCharges(leap, d('2028-03-01T00:00:00Z'))[1].at.toISOString()).toBe('2028-02-29T10:00:00.000Z');
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
    expect(charges.map((c) => [c.kind, c.total, c.creditApplied, c.creditCarried])).toEqual([
      ['start', '60.00', '0.00', '0.00'],
      ['phase_change', '0.00', '0.00', '20.33'], // -40.65 (21/31 of $60) + 20.32 (21/31 of $30)
      ['renewal', '9.67', '20.33', '0.00'],
    ]);
    expect(charges[2].lines.map((l) => [l.price_id, l.quantity, l.unit_amount, l.amount, l.description])).toEqual([
      ['basic', 1, '30.00', '30.00', 'Subscription period'],
      ['basic', 1, '-20.33', '-20.33', 'Credit carried from earlier changes'],
    ]);
    // The zero-total downgrade makes no invoice.
    expect(planBilling({ phases: plan.phases, prorationBehavior: 'create_prorations', from: d('2026-01-01T00:00:00Z'), to: d('2026-02-02T00:00:00Z') }).map((i) => [day(i.billingDate), i.total])).toEqual([
      ['2026-01-01', '60.00'],
      ['2026-02-01', '9.67'],
    ]);
  });

  it('spreads a large credit over several renewals', () => {
    const plan: BillingPlan = {
      anchor: null,
      behavior: 'create_prorations',
      phases: [
        { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-02T00:00:00Z'), items: [item('big', '310.00')] },
        { start: d('2026-01-02T00:00:00Z'), end: null, items: [item('small', '100.00')] },
      ],
    };
    // Credit 300.00 (30/31 of 310), charge 96.77 (30/31 of 100): 203.23 carried.
    expect(planCharges(plan, d('2026-05-01T00:00:00Z')).map((c) => [day(c.at), c.total, c.creditCarried])).toEqual([
      ['2026-01-01', '310.00', '0.00'],
      ['2026-01-02', '0.00', '203.23'],
      ['2026-02-01', '0.00', '103.23'],
      ['2026-03-01', '0.00', '3.23'],
      ['2026-04-01', '96.77', '0.00'],
      ['2026-05-01', '100.00', '0.00'],
    ]);
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

  it('none: a subscription starting on a billing date (today, anchored on its start or not) bills nothing at the start; the first invoice is on the next billing date', () => {
    const monthly: PlanPhase[] = [{ start: d('2026-01-01T00:00:00Z'), end: null, items: [item('m', '31.00')] }];
    for (const anchor of [null, d('2026-01-01T00:00:00Z'), d('2025-11-01T00:00:00Z')]) {
      const plan: BillingPlan = { anchor, behavior: 'none', phases: monthly };
      expect(summary(plan, '2026-03-01T00:00:00Z')).toEqual([['2026-02-01', '31.00'], ['2026-03-01', '31.00']]);
      expect(nextBillingAfter(plan, d('2026-01-01T00:00:00Z'))?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
      expect(nextBillingAfter(plan, d('2025-12-31T00:00:00Z'))?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
      expect(upcomingCharges(plan, d('2025-12-31T00:00:00Z'), 1).map((c) => [day(c.at), c.kind, day(c.periodEnd!)])).toEqual([['2026-02-01', 'renewal', '2026-03-01']]);
    }
    // The other behaviours still bill the start; a later phase starting on a billing date is a renewal under every behaviour.
    expect(summary({ anchor: null, behavior: 'create_prorations', phases: monthly }, '2026-01-01T00:00:00Z')).toEqual([['2026-01-01', '31.00']]);
    const upgrade: BillingPlan = {
      anchor: null,
      behavior: 'none',
      phases: [
        { start: d('2026-01-01T00:00:00Z'), end: d('2026-03-01T00:00:00Z'), items: [item('m', '31.00')] },
        { start: d('2026-03-01T00:00:00Z'), end: null, items: [item('m2', '50.00')] },
      ],
    };
    expect(summary(upgrade, '2026-04-01T00:00:00Z')).toEqual([['2026-02-01', '31.00'], ['2026-03-01', '50.00'], ['2026-04-01', '50.00']]);
  });

  it('bills one-time items once at their phase start, with quantities', () => {
    const plan: BillingPlan = {
      anchor: null,
      behavior: 'none',
      phases: [
        { start: d('2026-01-10T00:00:00Z'), end: d('2026-02-10T00:00:00Z'), items: [item('setup', '49.00', null, 1, 2), item('seat', '5.00', 'month', 1, 3)] },
        { start: d('2026-02-10T00:00:00Z'), end: null, items: [item('onboarding', '20.00', null)] },
      ],
    };
    expect(planBilling({ phases: plan.phases, prorationBehavior: 'none', from: d('2026-01-01T00:00:00Z'), to: d('2027-01-01T00:00:00Z') }).map((i) => [day(i.billingDate), i.periodEnd && day(i.periodEnd), i.total, i.lines.map((l) => [l.price_id, l.quantity, l.amount])])).toEqual([
      ['2026-01-10', '2026-02-10', '98.00', [['setup', 2, '98.00']]], // none: recurring charges start on the next billing date, past this phase
      ['2026-02-10', null, '20.00', [['onboarding', 1, '20.00']]], // no recurring item: no period, nothing after
    ]);
    expect(nextBillingAfter(plan, d('2026-02-10T00:00:00Z'))).toBeNull();
  });

  it('bills nothing for free phases, however long, and still finds the next paid date', () => {
    const plan: BillingPlan = {
      anchor: null,
      behavior: 'create_prorations',
      phases: [
        { start: d('2026-01-01T00:00:00Z'), end: d('2031-01-01T00:00:00Z'), items: [item('free', '0.00', 'day')] },
        { start: d('2031-01-01T00:00:00Z'), end: null, items: [item('paid', '1.00', 'year', 3)] },
      ],
    };
    expect(planCharges(plan, d('2030-12-31T00:00:00Z'))).toEqual([]);
    expect(nextBillingAfter(plan, d('2026-01-01T00:00:00Z'))?.toISOString()).toBe('2031-01-01T00:00:00.000Z');
    // Three-year cycles from the subscription's start (2026, 2029, 2032, 2035): a prorated
    // year to 2032, then every three years, beyond any fixed look-ahead.
    expect(nextBillingAfter(plan, d('2031-01-01T00:00:00Z'))?.toISOString()).toBe('2032-01-01T00:00:00.000Z');
    expect(nextBillingAfter(plan, d('2032-01-01T00:00:00Z'))?.toISOString()).toBe('2035-01-01T00:00:00.000Z');
    expect(summary(plan, '2035-01-01T00:00:00Z')).toEqual([
      ['2031-01-01', '0.33'], // 365 of the 1,095 days of 2029-2032
      ['2032-01-01', '1.00'],
      ['2035-01-01', '1.00'],
    ]);
    const allFree: BillingPlan = { ...plan, phases: [{ ...plan.phases[0], end: null }] };
    expect(nextBillingAfter(allFree, d('2026-01-01T00:00:00Z'))).toBeNull();
    const zeroQuantity: BillingPlan = { ...plan, phases: [{ start: plan.phases[0].start, end: null, items: [item('q0', '9.00', 'day', 1, 0)] }] };
    expect(nextBillingAfter(zeroQuantity, d('2026-01-01T00:00:00Z'))).toBeNull();
  });

  it('stops at cancellation and at the last phase end; knows the phase and status at any time', () => {
    const plan: BillingPlan = threePhases('create_prorations');
    const canceled = { ...plan, canceledAt: d('2026-02-10T00:00:00Z') };
    expect(summary(canceled, '2030-01-01T00:00:00Z').map(([date]) => date)).toEqual(['2026-01-15', '2026-02-01']);
    expect(statusAt(canceled, d('2026-03-01T00:00:00Z'))).toBe('canceled');
    expect(nextBillingAfter(canceled, d('2026-02-01T00:00:00Z'))).toBeNull();
    const ending: BillingPlan = { ...plan, phases: [plan.phases[0], { ...plan.phases[1] }] };
    expect(statusAt(ending, d('2026-03-15T00:00:00Z'))).toBe('ended');
    expect(nextWakeAfter(ending, d('2026-03-01T00:00:00Z'))?.toISOString()).toBe('2026-03-15T00:00:00.000Z');
    expect(nextWakeAfter(ending, d('2026-03-15T00:00:00Z'))).toBeNull();
    expect(nextWakeAfter(plan, d('2025-06-01T00:00:00Z'))?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(nextWakeAfter(plan, d('2026-01-20T00:00:00Z'))?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    // The stored state the workflow keeps: scheduled, then in its phase, then ended with nothing to bill.
    expect(stateAt(plan, d('2025-12-31T00:00:00Z'))).toEqual({ status: 'scheduled', active_phase_index: null });
    expect(nextBillingAfter(plan, d('2025-12-31T00:00:00Z'))).toEqual(d('2026-01-15T00:00:00Z'));
    expect(stateAt(plan, d('2026-01-20T00:00:00Z'))).toEqual({ status: 'active', active_phase_index: 1 });
    expect(nextBillingAfter(plan, d('2026-01-20T00:00:00Z'))).toEqual(d('2026-02-01T00:00:00Z'));
    expect(stateAt(ending, d('2026-03-15T00:00:00Z'))).toEqual({ status: 'ended', active_phase_index: null });
    expect(nextBillingAfter(ending, d('2026-03-15T00:00:00Z'))).toEqual(null);
  });

  it('re-exports the five phase rules', () => {
    const ok = threePhases('none').phases;
    expect(validatePhases(ok)).toBeNull();
    expect(validatePhases([{ ...ok[0], items: [] }])?.rule).toBe('phase_has_items');
  });
});

// ---------------------------------------------------------------------------------------------
// Properties over random schedules.

const intervalArb = fc.constantFrom<Interval>('day', 'week', 'month', 'year');
const behaviorArb = fc.constantFrom<ProrationBehavior>('create_prorations', 'always_invoice', 'none');

interface Gen {
  plan: BillingPlan;
  until: Date;
}

/**
 * Random valid plans: 1-4 contiguous phases (last one open or not), each with 1-3 recurring
 * items of one cycle and positive prices, an optional anchor around the start, and a horizon
 * of up to 400 days after the start. Instants on whole seconds or with odd milliseconds.
 */
const genArb: fc.Arbitrary<Gen> = fc
  .record({
    start: fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2030, 0, 1) }),
    phases: fc.array(
      fc.record({
        length: fc.integer({ min: 1, max: 300 * DAY }),
        interval: intervalArb,
        count: fc.integer({ min: 1, max: 3 }),
        prices: fc.array(fc.tuple(fc.integer({ min: 1, max: 50_000 }), fc.integer({ min: 1, max: 5 })), { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    behavior: behaviorArb,
    anchorOffset: fc.option(fc.integer({ min: -60 * DAY, max: 60 * DAY })),
    lastOpen: fc.boolean(),
    horizon: fc.integer({ min: 0, max: 400 * DAY }),
  })
  .map(({ start, phases, behavior, anchorOffset, lastOpen, horizon }) => {
    const out: PlanPhase[] = [];
    let at = start;
    phases.forEach((p, i) => {
      const end = i === phases.length - 1 && lastOpen ? null : at + p.length;
      out.push({
        start: new Date(at),
        end: end === null ? null : new Date(end),
        items: p.prices.map(([cents, qty], n) => item(`p${i}_${n}`, new Decimal(cents).div(100).toFixed(2), p.interval, p.count, qty)),
      });
      if (end !== null) at = end;
    });
    const plan: BillingPlan = { anchor: anchorOffset === null ? null : new Date(start + anchorOffset), behavior, phases: out };
    return { plan, until: new Date(start + horizon) };
  });

/** The billing calendar a phase follows: the rule of docs/adr/0305-billing-calendar-and-date-limits.md, restated. */
function cycleOfPhase(plan: BillingPlan, i: number) {
  const first = plan.phases[i].items.find((it) => it.recurring)!;
  const anchor = i > 0 && plan.behavior === 'always_invoice' ? plan.phases[i].start : plan.anchor ?? plan.phases[0].start;
  return { anchor, interval: first.interval!, count: first.interval_count! };
}

const rawNet = (c: Charge) => c.lines.filter((l) => l.description !== 'Credit carried from earlier changes').reduce((acc, l) => acc.plus(l.amount), new Decimal(0));

describe('billing plan properties', () => {
  it('bills every period of every phase exactly once, with no gap and no overlap (reference model)', () => {
    fc.assert(
      fc.property(genArb, ({ plan, until }) => {
        const charges = planCharges(plan, until);
        plan.phases.forEach((phase, i) => {
          if (phase.start > until) return;
          const { anchor, interval, count } = cycleOfPhase(plan, i);
          const stop = Math.min(phase.end?.getTime() ?? Infinity, until.getTime() + 1);
          const periods = periodsBetween(anchor, interval, count, phase.start, new Date(stop));
          const expected: [number, number][] = [];
          periods.forEach((p, k) => {
            if (k === 0) {
              const onCycle = p.start.getTime() === phase.start.getTime();
              // `none` bills a phase's start only when a later phase starts on a billing date (a renewal).
              if (plan.behavior !== 'none' || (onCycle && i > 0)) expected.push([phase.start.getTime(), p.end.getTime()]);
            } else expected.push([p.start.getTime(), p.end.getTime()]);
          });
          const actual = charges.filter((c) => c.phaseIndex === i).map((c): [number, number] => [c.periodStart.getTime(), c.periodEnd!.getTime()]);
          // A stub so short that its proration rounds to 0.00 (with nothing to credit) bills nothing.
          if (expected.length > 0 && actual[0]?.[0] !== expected[0][0] && periods[0].start < phase.start) {
            const stub = initialCharge(plan.behavior, { start: phase.start, anchor, interval, count, items: phase.items });
            assert.equal(stub?.total, '0.00');
            expected.shift();
          }
          assert.deepEqual(actual, expected);
          // Consecutive billed periods of a phase touch: no gap, no overlap.
          for (let k = 1; k < actual.length; k++) assert.equal(actual[k][0], actual[k - 1][1]);
          // The billed periods cover the phase from its first billed instant to its end (or the horizon).
          if (actual.length > 0) {
            assert.ok(actual[actual.length - 1][1] >= stop);
            assert.equal(actual[0][0], expected[0][0]);
          }
        });
      }),
      { numRuns: 1500 },
    );
  });

  it('keys are unique period starts, in strictly increasing order, each a billing date or a phase start', () => {
    fc.assert(
      fc.property(genArb, ({ plan, until }) => {
        const charges = planCharges(plan, until);
        assert.equal(new Set(charges.map((c) => c.key)).size, charges.length);
        assert.equal(new Set(charges.map((c) => c.periodStart.toISOString())).size, charges.length);
        for (let k = 0; k < charges.length; k++) {
          const c = charges[k];
          assert.equal(c.key, `${c.phaseIndex}:${c.periodStart.toISOString()}`);
          assert.equal(c.at.getTime(), c.periodStart.getTime());
          assert.ok(c.at <= until);
          if (k > 0) assert.ok(c.at > charges[k - 1].at);
          const phase = plan.phases[c.phaseIndex];
          assert.ok(c.at >= phase.start && (!phase.end || c.at < phase.end));
          const { anchor, interval, count } = cycleOfPhase(plan, c.phaseIndex);
          if (c.kind === 'renewal') assert.ok(isBillingDate(anchor, interval, count, c.at));
          else assert.equal(c.at.getTime(), phase.start.getTime());
          assert.equal(c.kind, c.at.getTime() === phase.start.getTime() ? (c.phaseIndex === 0 ? 'start' : 'phase_change') : 'renewal');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('never invoices a negative amount, and conserves money through carried credit', () => {
    fc.assert(
      fc.property(genArb, ({ plan, until }) => {
        const charges = planCharges(plan, until);
        let credit = new Decimal(0);
        let totals = new Decimal(0);
        let nets = new Decimal(0);
        for (const c of charges) {
          const total = new Decimal(c.total);
          assert.ok(total.gte(0));
          assert.ok(new Decimal(c.creditCarried).gte(0));
          // Credit applied comes from what was carried, and is shown as a line.
          assert.ok(new Decimal(c.creditApplied).lte(credit));
          const shown = c.lines.filter((l) => l.description === 'Credit carried from earlier changes');
          assert.equal(shown.reduce((acc, l) => acc.minus(l.amount), new Decimal(0)).toFixed(2), c.creditApplied);
          assert.equal(c.lines.reduce((acc, l) => acc.plus(l.amount), new Decimal(0)).gte(0) ? c.lines.reduce((acc, l) => acc.plus(l.amount), new Decimal(0)).toFixed(2) : '0.00', c.total);
          for (const l of c.lines) assert.equal(l.amount, multiplyAmount(l.unit_amount, l.quantity));
          // A credit line never exceeds what the previous period billed for the same item.
          totals = totals.plus(total);
          nets = nets.plus(rawNet(c));
          credit = new Decimal(c.creditCarried);
        }
        // Everything invoiced, less the credit still carried, is exactly the sum of the charges.
        assert.equal(totals.minus(credit).toFixed(2), nets.toFixed(2));
        if (plan.behavior === 'none') assert.ok(credit.isZero());
      }),
      { numRuns: 1000 },
    );
  });

  it('is stable: charges up to an earlier instant are a prefix of those up to a later one', () => {
    fc.assert(
      fc.property(genArb, fc.integer({ min: 0, max: 200 * DAY }), ({ plan, until }, extra) => {
        const early = planCharges(plan, until);
        const late = planCharges(plan, new Date(until.getTime() + extra));
        assert.deepEqual(late.slice(0, early.length), early);
      }),
      { numRuns: 500 },
    );
  });

  it('planBilling over [a, c) is planBilling over [a, b) then over [b, c), and matches invoicedCharges', () => {
    fc.assert(
      fc.property(genArb, fc.double({ min: 0, max: 1, noNaN: true }), ({ plan, until }, cut) => {
        const start = plan.phases[0].start.getTime();
        const b = new Date(start + Math.round((until.getTime() - start) * cut));
        const input = { phases: plan.phases, billingCycleAnchor: plan.anchor, prorationBehavior: plan.behavior };
        const all = planBilling({ ...input, from: plan.phases[0].start, to: until });
        const left = planBilling({ ...input, from: plan.phases[0].start, to: b });
        const right = planBilling({ ...input, from: b, to: until });
        assert.deepEqual([...left, ...right], all);
        const charges = invoicedCharges(plan, until).filter((c) => c.at < until);
        assert.deepEqual(
          all.map((i) => [i.key, i.total, i.billingDate.getTime()]),
          charges.map((c) => [c.key, c.total, c.at.getTime()]),
        );
        for (const i of all) assert.ok(new Decimal(i.total).gt(0));
      }),
      { numRuns: 500 },
    );
  });

  it('nextBillingAfter is the next invoice, and nextWakeAfter never sleeps past a charge', () => {
    fc.assert(
      fc.property(genArb, ({ plan, until }) => {
        const horizon = new Date(until.getTime() + 4 * 366 * DAY);
        const upcoming = invoicedCharges(plan, horizon).filter((c) => c.at > until);
        const next = nextBillingAfter(plan, until);
        if (upcoming.length > 0) assert.equal(next?.getTime(), upcoming[0].at.getTime());
        else assert.ok(next === null || next > horizon);
        const wake = nextWakeAfter(plan, until);
        const firstCharge = planCharges(plan, horizon).find((c) => c.at > until);
        if (firstCharge) {
          assert.ok(wake !== null && wake <= firstCharge.at);
        }
        if (wake) assert.ok(wake > until);
      }),
      { numRuns: 300 },
    );
  });

  it('a prorated start plus the rest of its cycle equals what the cycle would cost', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2030, 0, 1) }),
        fc.integer({ min: 1, max: 27 * DAY }),
        fc.integer({ min: 1, max: 100000 }),
        fc.integer({ min: 1, max: 4 }),
        (anchorMs, offset, cents, qty) => {
          const anchor = new Date(anchorMs);
          const unit = new Decimal(cents).div(100).toFixed(2);
          const start = new Date(anchorMs + offset);
          const prorated = planCharges({ anchor, behavior: 'create_prorations', phases: [{ start, end: null, items: [item('x', unit, 'month', 1, qty)] }] }, start)[0];
          const proratedTotal = prorated?.total ?? '0.00';
          // Billed for the whole cycle then switched to the same item: the credit equals the prorated charge.
          const switched = planCharges(
            {
              anchor,
              behavior: 'create_prorations',
              phases: [
                { start: anchor, end: start, items: [item('x', unit, 'month', 1, qty)] },
                { start, end: null, items: [item('x', unit, 'month', 1, qty)] },
              ],
            },
            start,
          );
          const change = switched.find((c) => c.kind === 'phase_change');
          if (proratedTotal === '0.00') return assert.equal(change, undefined); // rounds to nothing either way
          const [credit, charge] = change!.lines.map((l) => new Decimal(l.amount));
          assert.equal(credit.neg().toFixed(2), charge.toFixed(2));
          assert.equal(charge.toFixed(2), proratedTotal);
          assert.equal(change!.total, '0.00');
          assert.ok(new Decimal(proratedTotal).lte(new Decimal(unit).times(qty)));
        },
      ),
      { numRuns: 1500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Bounded cost: questions about "now" never walk the calendar from the start.

describe('charges after an instant', () => {
  const invoicedOf = (charges: Charge[]) => charges.filter((c) => c.total !== '0.00');
  const shape = (c: Charge) => [c.key, c.total, c.creditApplied, c.creditCarried, c.lines];

  it('are the tail of all charges, with the same credit carried (renewals before it skipped, not walked)', () => {
    fc.assert(
      fc.property(genArb, fc.double({ min: 0, max: 1, noNaN: true }), ({ plan, until }, share) => {
        const start = plan.phases[0].start.getTime();
        const after = new Date(Math.floor(start + share * (until.getTime() - start)));
        const reference = invoicedOf(planCharges(plan, until)).filter((c) => c.at > after);
        assert.deepEqual(invoicedCharges(plan, until, after).map(shape), reference.map(shape));
        assert.deepEqual(planCharges(plan, until, after).map(shape), planCharges(plan, until).filter((c) => c.at > after).map(shape));
        const horizon = new Date(until.getTime() + 4 * 366 * DAY);
        const upcoming = upcomingCharges(plan, after, 3).filter((c) => c.at <= horizon);
        assert.deepEqual(upcoming.map(shape), invoicedOf(planCharges(plan, horizon)).filter((c) => c.at > after).slice(0, 3).map(shape));
      }),
      { numRuns: 300 },
    );
  });

  // A yearly phase of one day, then $1 a day: the unused year is credit that pays the daily renewals.
  const creditPlan = (yearlyUnit: string, quantity: number): BillingPlan => ({
    anchor: null,
    behavior: 'create_prorations',
    phases: [
      { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-02T00:00:00Z'), items: [item('yearly', yearlyUnit, 'year', 1, quantity)] },
      { start: d('2026-01-02T00:00:00Z'), end: null, items: [item('daily', '1.00', 'day')] },
    ],
  });

  it('credit that pays a few months of renewals: the next invoice is the first one it no longer covers', () => {
    const plan = creditPlan('100.00', 1);
    const brute = invoicedOf(planCharges(plan, d('2026-12-31T00:00:00Z'))).filter((c) => c.at > d('2026-01-05T00:00:00Z'));
    expect(nextBillingAfter(plan, d('2026-01-05T00:00:00Z'))).toEqual(brute[0].at);
    expect(invoicedCharges(plan, d('2026-12-31T00:00:00Z'), d('2026-01-05T00:00:00Z')).map(shape)).toEqual(brute.map(shape));
    // 364 of 365 days of $100 unused = $99.73: 99 free days, then $0.27 due on the 100th.
    expect(brute[0].at.toISOString()).toBe('2026-04-11T00:00:00.000Z');
    expect(brute[0].total).toBe('0.27');
  });

  it('credit larger than every renewal until the calendar ends: nothing more is billed, answered at once', () => {
    // Walking these renewals one by one took tens of seconds and blocked the process.
    const plan = creditPlan('1000000.00', 1000);
    expect(nextBillingAfter(plan, d('2026-01-05T00:00:00Z'))).toBeNull();
    expect(invoicedCharges(plan, d('2126-01-01T00:00:00Z'), d('2026-01-01T00:00:00Z'))).toEqual([]);
    expect(upcomingCharges(plan, d('2026-01-01T00:00:00Z'), 5)).toEqual([]);
  });

  it('a daily subscription started a year ago: the next billing date is tomorrow, and a wide range is refused, not walked', () => {
    const plan: BillingPlan = { anchor: null, behavior: 'create_prorations', phases: [{ start: d('2025-01-01T00:00:00Z'), end: null, items: [item('daily', '1.00', 'day')] }] };
    expect(nextBillingAfter(plan, d('2026-01-01T12:00:00Z'))?.toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(invoicedCharges(plan, d('2026-01-01T00:00:00Z'))).toHaveLength(366);
    expect(() => invoicedCharges(plan, d('2050-01-01T00:00:00Z'))).toThrow(RangeError);
  });
});
