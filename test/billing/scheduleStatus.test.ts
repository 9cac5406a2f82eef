import { BillingPlan, PlanItem, nextBillingAfter, nextWakeAfter, planBilling, stateAt, statusAt, upcomingCharges } from '../../src/billing/schedule';

const d = (s: string) => new Date(s);
const iso = (x: Date | null) => (x ? x.toISOString() : null);
const monthly: PlanItem = { price_id: 'm', product_id: 'prod_m', product_name: 'M', quantity: 1, unit_amount: '10.00', recurring: true, interval: 'month', interval_count: 1 };
const plan = (over: Partial<BillingPlan> = {}): BillingPlan => ({
  anchor: null,
  behavior: 'create_prorations',
  phases: [
    { start: d('2026-01-01T00:00:00Z'), end: d('2026-03-01T00:00:00Z'), items: [monthly] },
    { start: d('2026-03-01T00:00:00Z'), end: d('2026-05-01T00:00:00Z'), items: [{ ...monthly, price_id: 'n', unit_amount: '20.00' }] },
  ],
  ...over,
});

describe('statusAt and stateAt', () => {
  it('are canceled from the cancellation instant on, not before', () => {
    const p = plan({ canceledAt: d('2026-02-10T00:00:00Z') });
    expect(statusAt(p, d('2026-02-09T23:59:59.999Z'))).toBe('active');
    expect(statusAt(p, d('2026-02-10T00:00:00Z'))).toBe('canceled');
    expect(statusAt(plan({ canceledAt: null }), d('2026-02-10T00:00:00Z'))).toBe('active');
  });

  it('are ended without phases or after the last one, with no next billing date then', () => {
    expect(statusAt(plan({ phases: [] }), d('2026-02-10T00:00:00Z'))).toBe('ended');
    expect(stateAt(plan({ phases: [] }), d('2026-02-10T00:00:00Z'))).toEqual({ status: 'ended', active_phase_index: null });
    expect(nextBillingAfter(plan({ phases: [] }), d('2026-02-10T00:00:00Z'))).toEqual(null);
    expect(stateAt(plan(), d('2026-05-01T00:00:00Z'))).toEqual({ status: 'ended', active_phase_index: null });
    expect(nextBillingAfter(plan(), d('2026-05-01T00:00:00Z'))).toEqual(null);
    expect(stateAt(plan(), d('2026-04-15T00:00:00Z'))).toEqual({ status: 'active', active_phase_index: 1 });
    expect(nextBillingAfter(plan(), d('2026-04-15T00:00:00Z'))).toEqual(null);
    expect(stateAt(plan(), d('2026-03-15T00:00:00Z'))).toEqual({ status: 'active', active_phase_index: 1 });
    expect(nextBillingAfter(plan(), d('2026-03-15T00:00:00Z'))).toEqual(d('2026-04-01T00:00:00Z'));
  });

  it('end a phase at the cancellation when it comes first, not at it when it comes later', () => {
    const p = plan({ canceledAt: d('2026-02-10T00:00:00Z') });
    expect(nextWakeAfter(p, d('2026-01-15T00:00:00Z'))?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(nextWakeAfter(p, d('2026-02-01T00:00:00Z'))?.toISOString()).toBe('2026-02-10T00:00:00.000Z');
    expect(nextWakeAfter(p, d('2026-02-10T00:00:00Z'))).toBeNull();
    const late = plan({ canceledAt: d('2026-06-01T00:00:00Z') });
    expect(nextWakeAfter(late, d('2026-04-15T00:00:00Z'))?.toISOString()).toBe('2026-05-01T00:00:00.000Z');
  });
});

describe('nextWakeAfter', () => {
  it('is the nearest of the next renewal, phase start and phase end', () => {
    const p = plan();
    expect(iso(nextWakeAfter(p, d('2025-12-01T00:00:00Z')))).toBe('2026-01-01T00:00:00.000Z');
    expect(iso(nextWakeAfter(p, d('2026-01-01T00:00:00Z')))).toBe('2026-02-01T00:00:00.000Z');
    expect(iso(nextWakeAfter(p, d('2026-02-01T00:00:00Z')))).toBe('2026-03-01T00:00:00.000Z');
    expect(iso(nextWakeAfter(p, d('2026-04-01T00:00:00Z')))).toBe('2026-05-01T00:00:00.000Z');
    expect(iso(nextWakeAfter(p, d('2026-05-01T00:00:00Z')))).toBeNull();
    // An open-ended phase wakes at its renewals only.
    const open = plan({ phases: [{ start: d('2026-01-01T00:00:00Z'), end: null, items: [monthly] }] });
    expect(iso(nextWakeAfter(open, d('2030-01-15T00:00:00Z')))).toBe('2030-02-01T00:00:00.000Z');
    // A phase that ends where it starts ends the plan: neither it nor anything after it is considered.
    const empty = plan({ phases: [{ start: d('2026-01-01T00:00:00Z'), end: d('2026-01-01T00:00:00Z'), items: [monthly] }, plan().phases[1]] });
    expect(iso(nextWakeAfter(empty, d('2025-12-01T00:00:00Z')))).toBeNull();
  });
});

describe('upcomingCharges', () => {
  it('returns none for a count of zero or less, else the next ones strictly after `after`', () => {
    expect(upcomingCharges(plan(), d('2025-12-01T00:00:00Z'), 0)).toEqual([]);
    expect(upcomingCharges(plan(), d('2025-12-01T00:00:00Z'), -1)).toEqual([]);
    expect(upcomingCharges(plan(), d('2026-02-01T00:00:00Z'), 2).map((c) => iso(c.at))).toEqual(['2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z']);
    expect(upcomingCharges(plan(), d('2026-01-31T23:59:59.999Z'), 1).map((c) => iso(c.at))).toEqual(['2026-02-01T00:00:00.000Z']);
  });
});

describe('planBilling', () => {
  it('stops at a cancellation', () => {
    const input = { phases: plan().phases, prorationBehavior: 'create_prorations' as const, from: d('2025-01-01T00:00:00Z'), to: d('2027-01-01T00:00:00Z') };
    expect(planBilling(input).map((i) => iso(i.billingDate))).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z']);
    expect(planBilling({ ...input, canceledAt: d('2026-02-15T00:00:00Z') }).map((i) => iso(i.billingDate))).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
  });
});
