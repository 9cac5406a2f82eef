import { BillingPlan, PlanItem, planCharges } from '../../src/billing/schedule';

const d = (s: string) => new Date(s);
const monthly = (price_id: string, unit_amount: string): PlanItem => ({ price_id, product_id: `prod_${price_id}`, product_name: price_id, quantity: 1, unit_amount, recurring: true, interval: 'month', interval_count: 1 });

describe('carried credit lines', () => {
  it('appear only on charges that credit pays part of', () => {
    const plan: BillingPlan = {
      anchor: null,
      behavior: 'create_prorations',
      phases: [
        { start: d('2026-01-01T00:00:00Z'), end: d('2026-01-16T00:00:00Z'), items: [monthly('big', '62.00')] },
        { start: d('2026-01-16T00:00:00Z'), end: null, items: [monthly('small', '31.00')] },
      ],
    };
    const charges = planCharges(plan, d('2026-03-01T00:00:00Z')).map((c) => ({
      at: c.at.toISOString().slice(0, 10), total: c.total, applied: c.creditApplied, carried: c.creditCarried, lines: c.lines.map((l) => [l.price_id, l.amount, l.description]),
    }));
    expect(charges.map((c) => [c.at, c.total, c.applied, c.carried])).toEqual([
      ['2026-01-01', '62.00', '0.00', '0.00'],
      ['2026-01-16', '0.00', '0.00', '16.00'],
      ['2026-02-01', '15.00', '16.00', '0.00'],
      ['2026-03-01', '31.00', '0.00', '0.00'],
    ]);
    expect(charges[1].lines.map((l) => l[2])).not.toContain('Credit carried from earlier changes');
    expect(charges[2].lines).toContainEqual(['small', '-16.00', 'Credit carried from earlier changes']);
    expect(charges[3].lines.map((l) => l[2])).not.toContain('Credit carried from earlier changes');
  });
});
