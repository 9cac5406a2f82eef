import { effectivePrice, nextBillingDateOf, StoredItem, toBillingPlan } from '../../src/billing/subscriptionPlan';

const item = (over: Partial<StoredItem> = {}): StoredItem => ({
  price_id: 'price_1', product_id: 'prod_1', product_name: 'Pro', quantity: 2, unit_amount: '10.00', recurring: true, interval: 'month', interval_count: 1, ...over,
});

describe('toBillingPlan', () => {
  it('bills the overridden price when there is one', () => {
    expect(effectivePrice(item())).toBe('10.00');
    expect(effectivePrice(item({ overridden_price_amount: null }))).toBe('10.00');
    expect(effectivePrice(item({ overridden_price_amount: '7.50' }))).toBe('7.50');
    expect(effectivePrice(item({ overridden_price_amount: '0.00' }))).toBe('0.00');
  });

  it('turns stored dates (Date or ISO string) into Dates, missing ones into null', () => {
    const plan = toBillingPlan({
      proration_behavior: 'create_prorations',
      billing_cycle_anchor: '2026-01-15T00:00:00.000Z',
      canceled_at: new Date('2026-06-01T00:00:00Z'),
      phases: [
        { start_date: '2026-01-15T00:00:00.000Z', end_date: new Date('2026-03-15T00:00:00Z'), items: [item({ overridden_price_amount: '8.00' })] },
        { start_date: new Date('2026-03-15T00:00:00Z'), items: [item({ recurring: false, interval: undefined, interval_count: undefined })] },
      ],
    });
    expect(plan).toEqual({
      anchor: new Date('2026-01-15T00:00:00Z'),
      behavior: 'create_prorations',
      canceledAt: new Date('2026-06-01T00:00:00Z'),
      phases: [
        {
          start: new Date('2026-01-15T00:00:00Z'),
          end: new Date('2026-03-15T00:00:00Z'),
          items: [{ price_id: 'price_1', product_id: 'prod_1', product_name: 'Pro', quantity: 2, unit_amount: '8.00', recurring: true, interval: 'month', interval_count: 1 }],
        },
        {
          start: new Date('2026-03-15T00:00:00Z'),
          end: null,
          items: [{ price_id: 'price_1', product_id: 'prod_1', product_name: 'Pro', quantity: 2, unit_amount: '10.00', recurring: false, interval: null, interval_count: null }],
        },
      ],
    });
    const bare = toBillingPlan({ proration_behavior: 'none', billing_cycle_anchor: null, phases: [{ start_date: '2026-01-01', end_date: null, items: [] }] });
    expect(bare).toEqual({ anchor: null, behavior: 'none', canceledAt: null, phases: [{ start: new Date('2026-01-01T00:00:00Z'), end: null, items: [] }] });
  });
});

describe('nextBillingDateOf', () => {
  const monthly = (over: Record<string, unknown> = {}) => ({
    status: 'active', proration_behavior: 'create_prorations', billing_cycle_anchor: null, canceled_at: null,
    phases: [{ start_date: '2026-01-01T00:00:00.000Z', end_date: '2026-04-01T00:00:00.000Z', items: [item()] }], ...over,
  });
  const d = (s: string) => new Date(s);

  it('is the first billing date from the moment of the read on', () => {
    expect(nextBillingDateOf(monthly({ status: 'scheduled' }), d('2025-12-20T00:00:00Z'))).toEqual(d('2026-01-01T00:00:00Z'));
    // A billing instant read at that very instant is still the next one (its invoice is being made).
    expect(nextBillingDateOf(monthly(), d('2026-02-01T00:00:00Z'))).toEqual(d('2026-02-01T00:00:00Z'));
    expect(nextBillingDateOf(monthly(), d('2026-02-01T00:00:00.001Z'))).toEqual(d('2026-03-01T00:00:00Z'));
    // Moves with the clock: no renewal has to write it.
    expect(nextBillingDateOf(monthly(), d('2026-03-10T00:00:00Z'))).toEqual(null);
  });

  it('is null once the subscription is canceled or ended, whatever the plan says', () => {
    expect(nextBillingDateOf(monthly({ status: 'canceled' }), d('2026-01-10T00:00:00Z'))).toBeNull();
    expect(nextBillingDateOf(monthly({ status: 'ended' }), d('2026-01-10T00:00:00Z'))).toBeNull();
    expect(nextBillingDateOf(monthly({ canceled_at: '2026-01-20T00:00:00.000Z' }), d('2026-01-25T00:00:00Z'))).toBeNull();
  });
});
