import fc from 'fast-check';
import { addMonths, mrrReport, MrrItem, MrrSubscription, phaseAt } from '../../src/billing/mrr';
import { collectionsReport, CollectedTransaction, MarkedPaidInvoice } from '../../src/billing/collections';
import { collectionsFromRollup, collectionsRollup, inForceFromRollup, mrrFromRollup, mrrRollup } from '../../src/billing/rollups';
import { monthsBetween } from '../../src/billing/mrr';
import { ageInvoices } from '../../src/billing/receivables';
import { agingTotalsFromRollup, receivablesRollup } from '../../src/billing/rollups';

const DAY = 86_400_000;
const base = Date.UTC(2026, 0, 1);
// Instants on whole days, or one millisecond before one (a month's last instant), to hit the edges.
const instant = (day: number, edge: boolean) => new Date(base + day * DAY - (edge ? 1 : 0));

const itemArb: fc.Arbitrary<MrrItem> = fc.record({
  recurring: fc.boolean(),
  interval: fc.constantFrom('day', 'week', 'month', 'year'),
  interval_count: fc.integer({ min: 1, max: 3 }),
  quantity: fc.integer({ min: 1, max: 5 }),
  unit_amount: fc.integer({ min: 0, max: 100_000 }).map((c) => (c / 100).toFixed(2)),
  overridden_price_amount: fc.option(fc.integer({ min: 0, max: 100_000 }).map((c) => (c / 100).toFixed(2)), { nil: null }),
});
const subArb = fc
  .record({
    start: fc.integer({ min: 0, max: 700 }),
    lengths: fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 4 }),
    edges: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    openEnded: fc.boolean(),
    // Empty item lists too: a free phase is in force with no MRR.
    items: fc.array(fc.array(itemArb, { maxLength: 3 }), { minLength: 4, maxLength: 4 }),
    cancelAfter: fc.option(fc.integer({ min: 0, max: 800 }), { nil: null }),
  })
  .map((r) => {
    let day = r.start;
    const phases = r.lengths.map((len, i) => {
      const start = instant(day, r.edges[i]);
      day += len;
      const last = i === r.lengths.length - 1;
      return { start_date: start, end_date: last && r.openEnded ? null : instant(day, r.edges[i + 1]), items: r.items[i] };
    });
    return { phases, canceled_at: r.cancelAfter === null ? null : instant(r.start + r.cancelAfter, r.edges[4]) };
  });
const subsArb = fc.array(subArb, { maxLength: 10 }).map((list) => list.map((s, i): MrrSubscription => ({ id: `s${i}`, customer_id: `c${i % 3}`, ...s })));
const rangeArb = fc.record({ from: fc.integer({ min: 0, max: 40 }), len: fc.integer({ min: 1, max: 30 }) }).map(({ from, len }) => {
  const f = addMonths('2025-06', from);
  return { from: f, to: addMonths(f, len - 1) };
});

describe('MRR rollup', () => {
  it('property: the report read from the rollup is exactly the live report, for any range', () => {
    fc.assert(
      fc.property(subsArb, rangeArb, (subs, { from, to }) => {
        expect(mrrFromRollup(mrrRollup(subs), from, to)).toEqual(mrrReport(subs, from, to));
      }),
      { numRuns: 300 },
    );
  });

  it('property: subscriptions in force at any instant, from the rollup, are the live count', () => {
    fc.assert(
      fc.property(subsArb, fc.integer({ min: -40, max: 1_600 }), fc.boolean(), (subs, day, edge) => {
        const t = instant(day, edge);
        expect(inForceFromRollup(mrrRollup(subs), t)).toBe(subs.filter((s) => phaseAt(s, t) !== null).length);
      }),
      { numRuns: 300 },
    );
  });

  it('property: a rebuild is a function of the source: same subscriptions in any order, same rollup', () => {
    fc.assert(
      fc.property(subsArb, (subs) => {
        const once = mrrRollup(subs);
        expect(mrrRollup([...subs].reverse())).toEqual(once);
        expect(JSON.parse(JSON.stringify(once))).toEqual(once); // stored as plain JSON
      }),
    );
  });

  it('stores only the months in which something changes', () => {
    const item: MrrItem = { recurring: true, interval: 'month', interval_count: 1, quantity: 1, unit_amount: '10.00' };
    const rows = mrrRollup([{ id: 'a', customer_id: 'c', canceled_at: null, phases: [{ start_date: new Date('2026-01-15'), end_date: null, items: [item] }] }]);
    expect(rows.map((r) => r.month)).toEqual(['2026-01']);
    expect(mrrFromRollup(rows, '2030-01', '2030-02').map((m) => [m.startingCents, m.mrrCents, m.newCents])).toEqual([[1000, 1000, 0], [1000, 1000, 0]]);
  });
});

describe('collections rollup', () => {
  const txArb: fc.Arbitrary<CollectedTransaction> = fc
    .record({
      customer: fc.option(fc.constantFrom('cust_a', 'cust_b', 'cust_c'), { nil: null }),
      currency: fc.constantFrom('BTC', 'ETH'),
      sats: fc.integer({ min: 1, max: 10_000_000 }),
      source: fc.constantFrom('blockchain' as const, 'manual_entry' as const),
      day: fc.integer({ min: 0, max: 800 }),
      edge: fc.boolean(),
      usd: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null }),
      applied: fc.array(fc.integer({ min: 0, max: 300_000 }), { maxLength: 3 }),
      unallocated: fc.option(fc.integer({ min: 0, max: 300_000 }), { nil: null }),
    })
    .map((r) => ({
      customer_id: r.customer,
      currency: r.currency,
      amount: (r.sats / 1e8).toFixed(8),
      transaction_source: r.source,
      timestamp: instant(r.day, r.edge),
      usd_value: r.usd === null ? null : (r.usd / 100).toFixed(2),
      unallocated_amount: r.unallocated === null ? null : (r.unallocated / 100).toFixed(2),
      allocations: r.applied.map((c) => ({ amount_applied: (c / 100).toFixed(2) })),
    }));
  const paidArb: fc.Arbitrary<MarkedPaidInvoice> = fc.record({
    paid_at: fc.integer({ min: 0, max: 800 }).map((d) => instant(d, false)),
    total_amount: fc.integer({ min: 0, max: 1_000_000 }).map((c) => (c / 100).toFixed(2)),
    amount_paid: fc.constantFrom('0.00', '0', '1.00'),
  });

  it('property: the report read from the rollup is exactly the live report, for any range', () => {
    fc.assert(
      fc.property(fc.array(txArb, { maxLength: 25 }), fc.array(paidArb, { maxLength: 6 }), rangeArb, (txs, paid, { from, to }) => {
        const months = monthsBetween(from, to);
        const rollup = collectionsRollup(txs, paid);
        expect(collectionsFromRollup(JSON.parse(JSON.stringify(rollup)), months)).toEqual(collectionsReport(txs, paid, months));
      }),
      { numRuns: 300 },
    );
  });

  it('property: a rebuild is a function of the source (order does not matter)', () => {
    fc.assert(
      fc.property(fc.array(txArb, { maxLength: 25 }), fc.array(paidArb, { maxLength: 6 }), (txs, paid) => {
        expect(collectionsRollup([...txs].reverse(), [...paid].reverse())).toEqual(collectionsRollup(txs, paid));
      }),
    );
  });
});

describe('receivables rollup', () => {
  const invArb = fc.record({
    id: fc.uuid(),
    customer_id: fc.constantFrom('cust_a', 'cust_b'),
    status: fc.constantFrom('pending', 'overdue'),
    due_date: fc.integer({ min: 0, max: 400 }).map((n) => new Date(base + n * DAY).toISOString().slice(0, 10)),
    total_amount: fc.integer({ min: 0, max: 1_000_000 }).map((c) => (c / 100).toFixed(2)),
    amount_paid: fc.integer({ min: 0, max: 500_000 }).map((c) => (c / 100).toFixed(2)),
    created_at: fc.integer({ min: -100, max: 400 }).chain((d) => fc.boolean().map((edge) => instant(d, edge))),
  });

  it('property: the aging totals from the rollup are exactly those of the live aging, on any day', () => {
    fc.assert(
      fc.property(fc.array(invArb, { maxLength: 30 }), fc.integer({ min: -120, max: 600 }), (invoices, asOfDay) => {
        const asOf = new Date(base + asOfDay * DAY).toISOString().slice(0, 10);
        const end = Date.parse(`${asOf}T00:00:00Z`) + DAY;
        const live = ageInvoices(invoices.filter((i) => i.created_at.getTime() < end), asOf);
        const groups = JSON.parse(JSON.stringify(receivablesRollup(invoices)));
        expect(agingTotalsFromRollup(groups, asOf)).toEqual({ buckets: live.buckets.map(({ invoices: _, ...b }) => b), total: live.total, overdue: live.overdue });
      }),
      { numRuns: 300 },
    );
  });
});
