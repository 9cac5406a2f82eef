import fc from 'fast-check';
import { addMonths, monthEnd, movementOf, mrrReport, MrrItem, MrrSubscription, subscriptionMrrCents } from '../../src/billing/mrr';
import { ageInvoices, agingBucket, daysPastDue } from '../../src/billing/receivables';
import { collectionsReport } from '../../src/billing/collections';

const d = (s: string) => new Date(s);
const item = (unit: string, interval: string | null = 'month', count = 1, quantity = 1, override: string | null = null): MrrItem => ({
  recurring: interval !== null,
  interval,
  interval_count: interval ? count : null,
  quantity,
  unit_amount: unit,
  overridden_price_amount: override,
});
const sub = (id: string, phases: MrrSubscription['phases'], canceled_at: Date | null = null): MrrSubscription => ({ id, customer_id: 'cust_' + id, phases, canceled_at });

describe('MRR of one subscription', () => {
  const at = d('2027-03-15T00:00:00Z');
  const one = (i: MrrItem) => subscriptionMrrCents(sub('a', [{ start_date: d('2027-01-01'), end_date: null, items: [i] }]), at);

  it('normalises every interval to a month, with overrides and quantities', () => {
    expect(one(item('10.00'))).toBe(1000);
    expect(one(item('30.00', 'month', 3))).toBe(1000);
    expect(one(item('1200.00', 'year'))).toBe(10000);
    expect(one(item('10.00', 'week'))).toBe(4333); // 10 x 52 / 12 = 43.333
    expect(one(item('1.00', 'day'))).toBe(3042); // 365 / 12 = 30.4166
    expect(one(item('10.00', 'month', 1, 3))).toBe(3000);
    expect(one(item('10.00', 'month', 1, 2, '7.50'))).toBe(1500);
    expect(one(item('99.00', null))).toBe(0); // one-time items are not recurring revenue
    // An interval that is not one of the four counts nothing, even one of an object's inherited names.
    for (const odd of ['toString', 'constructor', 'fortnight']) expect(one(item('10.00', odd as never))).toBe(0);
  });

  it('counts the phase in force (start inclusive, end exclusive) and nothing once canceled', () => {
    const s = sub('a', [
      { start_date: d('2027-01-01'), end_date: d('2027-02-01'), items: [item('5.00')] },
      { start_date: d('2027-02-01'), end_date: d('2027-04-01'), items: [item('20.00')] },
    ]);
    expect(subscriptionMrrCents(s, d('2026-12-31'))).toBe(0);
    expect(subscriptionMrrCents(s, d('2027-01-31T23:59:59.999Z'))).toBe(500);
    expect(subscriptionMrrCents(s, d('2027-02-01'))).toBe(2000);
    expect(subscriptionMrrCents(s, d('2027-04-01'))).toBe(0);
    expect(subscriptionMrrCents({ ...s, canceled_at: d('2027-02-10') }, d('2027-02-10'))).toBe(0);
  });
});

describe('MRR report', () => {
  it('tells new, expansion, contraction and churn apart, month by month', () => {
    const subs = [
      sub('new', [{ start_date: d('2027-02-10'), end_date: null, items: [item('10.00')] }]),
      sub('up', [
        { start_date: d('2026-12-01'), end_date: d('2027-02-15'), items: [item('10.00')] },
        { start_date: d('2027-02-15'), end_date: null, items: [item('25.00')] },
      ]),
      sub('down', [
        { start_date: d('2026-12-01'), end_date: d('2027-02-15'), items: [item('40.00')] },
        { start_date: d('2027-02-15'), end_date: null, items: [item('30.00')] },
      ]),
      sub('gone', [{ start_date: d('2026-12-01'), end_date: null, items: [item('50.00')] }], d('2027-02-20')),
    ];
    const [jan, feb] = mrrReport(subs, '2027-01', '2027-02');
    expect(jan).toMatchObject({ startingCents: 10000, mrrCents: 10000, newCents: 0, churnedCents: 0, activeSubscriptions: 3 });
    expect(feb).toMatchObject({
      startingCents: 10000, mrrCents: 6500, newCents: 1000, expansionCents: 1500, contractionCents: -1000, churnedCents: -5000,
      activeSubscriptions: 3, newSubscriptions: 1, churnedSubscriptions: 1,
    });
  });

  const interval = fc.constantFrom('day', 'week', 'month', 'year');
  const itemArb = fc.record({
    recurring: fc.boolean(),
    interval,
    interval_count: fc.integer({ min: 1, max: 3 }),
    quantity: fc.integer({ min: 1, max: 5 }),
    unit_amount: fc.integer({ min: 0, max: 100_000 }).map((c) => (c / 100).toFixed(2)),
    overridden_price_amount: fc.option(fc.integer({ min: 0, max: 100_000 }).map((c) => (c / 100).toFixed(2)), { nil: null }),
  });
  const DAY = 86_400_000;
  const base = Date.UTC(2026, 0, 1);
  const subArb = fc
    .record({
      start: fc.integer({ min: 0, max: 700 }),
      lengths: fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 4 }),
      openEnded: fc.boolean(),
      items: fc.array(fc.array(itemArb, { minLength: 1, maxLength: 3 }), { minLength: 4, maxLength: 4 }),
      cancelAfter: fc.option(fc.integer({ min: 0, max: 800 }), { nil: null }),
    })
    .map((r, ) => {
      let t = base + r.start * DAY;
      const phases = r.lengths.map((len, i) => {
        const start = new Date(t);
        t += len * DAY;
        const last = i === r.lengths.length - 1;
        return { start_date: start, end_date: last && r.openEnded ? null : new Date(t), items: r.items[i] };
      });
      return { phases, canceled_at: r.cancelAfter === null ? null : new Date(base + (r.start + r.cancelAfter) * DAY) };
    });
  const subsArb = fc.array(subArb, { maxLength: 8 }).map((list) => list.map((s, i) => sub(`s${i}`, s.phases, s.canceled_at)));
  const range = fc.record({ from: fc.integer({ min: 0, max: 30 }), len: fc.integer({ min: 1, max: 14 }) }).map(({ from, len }) => {
    const f = addMonths('2025-12', from);
    return { from: f, to: addMonths(f, len - 1) };
  });

  it('property: the movements add up to the change in MRR, and each month opens where the last closed', () => {
    fc.assert(
      fc.property(subsArb, range, (subs, { from, to }) => {
        const rows = mrrReport(subs, from, to);
        rows.forEach((r, i) => {
          expect(r.startingCents + r.newCents + r.expansionCents + r.contractionCents + r.churnedCents).toBe(r.mrrCents);
          if (i > 0) expect(r.startingCents).toBe(rows[i - 1].mrrCents);
          expect(r.mrrCents).toBe(subs.reduce((s, x) => s + subscriptionMrrCents(x, monthEnd(r.month)), 0));
          expect(r.newCents).toBeGreaterThanOrEqual(0);
          expect(r.expansionCents).toBeGreaterThanOrEqual(0);
          expect(r.contractionCents).toBeLessThanOrEqual(0);
          expect(r.churnedCents).toBeLessThanOrEqual(0);
        });
      }),
    );
  });

  it('property: a subscription never counts twice: the report is the sum of each one alone, each in at most one movement', () => {
    fc.assert(
      fc.property(subsArb, range, (subs, { from, to }) => {
        const all = mrrReport(subs, from, to);
        const alone = subs.map((s) => mrrReport([s], from, to));
        all.forEach((row, m) => {
          for (const key of ['mrrCents', 'newCents', 'expansionCents', 'contractionCents', 'churnedCents', 'activeSubscriptions', 'newSubscriptions', 'churnedSubscriptions'] as const) {
            expect(row[key]).toBe(alone.reduce((sum, r) => sum + r[m][key], 0));
          }
          for (const r of alone) {
            const moved = [r[m].newCents, r[m].expansionCents, r[m].contractionCents, r[m].churnedCents].filter((c) => c !== 0);
            expect(moved.length).toBeLessThanOrEqual(1);
            expect(r[m].activeSubscriptions).toBeLessThanOrEqual(1);
          }
          expect(row.newSubscriptions + row.churnedSubscriptions).toBeLessThanOrEqual(subs.length);
        });
      }),
    );
  });

  it('movementOf names exactly one movement for any change', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), (a, b) => {
        const m = movementOf(a, b);
        expect(m === null).toBe(a === b);
      }),
    );
  });
});

describe('receivables aging', () => {
  it('buckets by days past due on the as-of day', () => {
    expect(daysPastDue('2027-01-01', '2027-01-01')).toBe(0);
    expect(daysPastDue('2027-01-01', '2027-03-01')).toBe(59);
    expect([0, 1, 30, 31, 60, 61, 90, 91, -5].map(agingBucket)).toEqual(['current', '1_30', '1_30', '31_60', '31_60', '61_90', '61_90', 'over_90', 'current']);
  });

  it('property: every invoice is in exactly one bucket and the buckets add up to the total', () => {
    const inv = fc.record({
      id: fc.uuid(),
      customer_id: fc.constant('cust_1'),
      status: fc.constantFrom('pending', 'overdue'),
      due_date: fc.integer({ min: 0, max: 400 }).map((n) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10)),
      total_amount: fc.integer({ min: 0, max: 1_000_000 }).map((c) => (c / 100).toFixed(2)),
      amount_paid: fc.constant('0.00'),
    });
    fc.assert(
      fc.property(fc.array(inv, { maxLength: 30 }), (invoices) => {
        const r = ageInvoices(invoices, '2026-09-01');
        expect(r.buckets.reduce((n, b) => n + b.count, 0)).toBe(invoices.length);
        const cents = (a: string) => Math.round(Number(a) * 100);
        expect(r.buckets.reduce((n, b) => n + cents(b.amount), 0)).toBe(cents(r.total.amount));
        expect(r.overdue.count).toBe(r.total.count - r.buckets[0].count);
      }),
    );
  });
});

describe('collections', () => {
  it('groups by month, currency and source, at the allocated USD value, with credit per customer', () => {
    const tx = (over: Partial<Parameters<typeof collectionsReport>[0][number]>) => ({
      customer_id: 'cust_a', currency: 'BTC', amount: '0.001', transaction_source: 'blockchain' as const, timestamp: d('2027-01-05'),
      usd_value: '50.00', unallocated_amount: '0.00', allocations: [{ amount_applied: '50.00' }], ...over,
    });
    const r = collectionsReport(
      [
        tx({}),
        tx({ amount: '0.002', usd_value: '100.00', allocations: [{ amount_applied: '60.00' }], unallocated_amount: '40.00' }),
        tx({ transaction_source: 'manual_entry', currency: 'ETH', amount: '1', usd_value: '3000.00', allocations: [], unallocated_amount: '3000.00', customer_id: 'cust_b' }),
        tx({ timestamp: d('2026-11-01'), unallocated_amount: '5.00' }), // before the range: credit still counts
      ],
      [{ paid_at: d('2027-01-20'), total_amount: '12.50', amount_paid: '0.00' }, { paid_at: d('2027-01-20'), total_amount: '10.00', amount_paid: '9.99' }],
      ['2027-01', '2027-02'],
    );
    expect(r.rows).toEqual([
      { month: '2027-01', currency: 'BTC', source: 'blockchain', manual: false, payments: 2, amount: '0.003', usd_value: '150.00', allocated_usd: '110.00', unallocated_usd: '40.00' },
      { month: '2027-01', currency: 'ETH', source: 'manual_entry', manual: true, payments: 1, amount: '1', usd_value: '3000.00', allocated_usd: '0.00', unallocated_usd: '3000.00' },
      { month: '2027-01', currency: 'USD', source: 'invoice_marked_paid', manual: true, payments: 1, amount: '12.50', usd_value: '12.50', allocated_usd: '12.50', unallocated_usd: '0.00' },
    ]);
    expect(r.months).toEqual([{ month: '2027-01', usd_value: '3162.50', payments: 4 }, { month: '2027-02', usd_value: '0.00', payments: 0 }]);
    expect(r.unallocated_credit).toEqual([{ customer_id: 'cust_a', amount: '45.00', transactions: 2 }, { customer_id: 'cust_b', amount: '3000.00', transactions: 1 }]);
  });
});
