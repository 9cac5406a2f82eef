import assert from 'node:assert/strict';
import fc from 'fast-check';
import Decimal from 'decimal.js';
import { Interval, billingDate, periodContaining } from '../../src/billing/calendar';
import { centsToAmount, multiplyAmount } from '../../src/billing/money';
import {
  ProrationBehavior,
  ProrationItem,
  applyCarriedCredit,
  initialCharge,
  itemsTotal,
  phaseChangeProration,
  prorateItems,
  prorateAmount,
  prorationFraction,
  remainingShare,
  splitAcross,
  splitAmount,
  unusedCredit,
} from '../../src/billing/proration';

const d = (s: string) => new Date(s);
const DAY = 86_400_000;
const dec = (s: Decimal.Value) => new Decimal(s);
const item = (price_id: string, unit_amount: string, quantity = 1): ProrationItem => ({ price_id, unit_amount, quantity });

const instantArb = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2060, 0, 1) });
const periodArb = fc
  .tuple(instantArb, fc.integer({ min: 1000, max: 400 * DAY }), fc.double({ min: -0.2, max: 1.2, noNaN: true }))
  .map(([s, len, at]) => ({ start: new Date(s), end: new Date(s + len), at: new Date(s + Math.round(len * at)) }));
const centsArb = fc.integer({ min: 0, max: 10_000_000 });
const itemsArb = fc.array(fc.record({ price_id: fc.constantFrom('a', 'b', 'c'), unit_amount: centsArb.map(centsToAmount), quantity: fc.integer({ min: 0, max: 50 }) }), { maxLength: 4 });

describe('proration: fractions and splits', () => {
  it('measures the remaining fraction of a period by time', () => {
    const jan = [d('2026-01-01T00:00:00Z'), d('2026-02-01T00:00:00Z')] as const;
    expect(remainingShare(...jan, d('2026-01-15T00:00:00Z'))).toEqual({ num: 17 * DAY, den: 31 * DAY });
    expect(prorationFraction(...jan, d('2026-01-15T00:00:00Z')).minus(dec(17).div(31)).abs().lt('1e-19')).toBe(true);
    expect(prorationFraction(...jan, d('2026-01-01T00:00:00Z')).toString()).toBe('1');
    expect(prorationFraction(...jan, d('2025-12-01T00:00:00Z')).toString()).toBe('1');
    expect(prorationFraction(...jan, d('2026-02-01T00:00:00Z')).toString()).toBe('0');
    expect(prorationFraction(...jan, d('2027-01-01T00:00:00Z')).toString()).toBe('0');
    // By seconds, not by days: half a day is half a day.
    expect(remainingShare(...jan, d('2026-01-31T12:00:00Z'))).toEqual({ num: DAY / 2, den: 31 * DAY });
    expect(remainingShare(...jan, d('2027-01-31T12:00:00Z'))).toEqual({ num: 0, den: 31 * DAY });
    expect(() => prorationFraction(jan[1], jan[0], jan[0])).toThrow(RangeError);
    expect(() => prorationFraction(jan[0], jan[0], jan[0])).toThrow(RangeError);
  });

  it('is an exact ratio in [0, 1], decreasing in the instant', () => {
    fc.assert(
      fc.property(periodArb, fc.integer({ min: 0, max: 10 * DAY }), ({ start, end, at }, later) => {
        const f = prorationFraction(start, end, at);
        assert.ok(f.gte(0) && f.lte(1));
        const clamped = Math.min(Math.max(at.getTime(), start.getTime()), end.getTime());
        assert.deepEqual(remainingShare(start, end, at), { num: end.getTime() - clamped, den: end.getTime() - start.getTime() });
        assert.ok(f.times(end.getTime() - start.getTime()).minus(end.getTime() - clamped).abs().lt('1e-25'));
        assert.ok(prorationFraction(start, end, new Date(at.getTime() + later)).lte(f));
      }),
      { numRuns: 3000 },
    );
  });

  it('rounds a proration that is exactly half a cent up, however the fraction is written', () => {
    // 5/6 of 3 cents is exactly 2.5 cents: computed as 3 x 5 / 6, not with 5/6 rounded first.
    const start = d('2026-01-01T00:00:00Z');
    const end = d('2026-01-07T00:00:00Z');
    const share = remainingShare(start, end, d('2026-01-02T00:00:00Z'));
    expect(prorateAmount('0.03', share)).toBe('0.03');
    expect(prorateItems([item('a', '0.03', 4)], share, 'x')[0]).toMatchObject({ unit_amount: '0.03', amount: '0.12' });
    expect(prorateAmount('1.00', { num: 1, den: 3 })).toBe('0.33');
  });

  it('splits an amount in two parts that add up exactly', () => {
    expect(splitAmount('10.00', d('2026-01-01T00:00:00Z'), d('2026-02-01T00:00:00Z'), d('2026-01-15T00:00:00Z'))).toEqual({ before: '4.52', after: '5.48' });
    expect(splitAmount('0.01', d('2026-01-01T00:00:00Z'), d('2026-01-03T00:00:00Z'), d('2026-01-02T00:00:00Z'))).toEqual({ before: '0.00', after: '0.01' });
    fc.assert(
      fc.property(periodArb, centsArb, ({ start, end, at }, cents) => {
        const total = centsToAmount(cents);
        const { before, after } = splitAmount(total, start, end, at);
        assert.equal(dec(before).plus(after).toFixed(2), total);
        const exactAfter = dec(total).times(prorationFraction(start, end, at));
        assert.ok(dec(after).minus(exactAfter).abs().lte('0.005'));
        assert.ok(dec(before).minus(dec(total).minus(exactAfter)).abs().lte('0.005'));
        assert.ok(dec(before).gte(0) && dec(after).gte(0));
      }),
      { numRuns: 5000 },
    );
  });

  it('splits one period at many instants into parts within a cent of exact that sum exactly', () => {
    fc.assert(
      fc.property(periodArb, centsArb, fc.array(fc.double({ min: -0.1, max: 1.1, noNaN: true }), { maxLength: 12 }), ({ start, end }, cents, cutShares) => {
        const total = centsToAmount(cents);
        const len = end.getTime() - start.getTime();
        const cuts = cutShares.map((s) => new Date(start.getTime() + Math.round(len * s)));
        const parts = splitAcross(total, start, end, cuts);
        assert.equal(parts.length, cuts.length + 1);
        assert.equal(parts.reduce((acc, p) => acc.plus(p), dec(0)).toFixed(2), total);
        const bounds = [start, ...[...cuts].sort((a, b) => a.getTime() - b.getTime()), end].map((t) => Math.min(Math.max(t.getTime(), start.getTime()), end.getTime()));
        parts.forEach((p, i) => {
          const exact = dec(total).times(bounds[i + 1] - bounds[i]).div(len);
          assert.ok(dec(p).gte(0));
          assert.ok(dec(p).minus(exact).abs().lte('0.01'), `part ${i}: ${p} vs ${exact.toString()}`);
        });
      }),
      { numRuns: 3000 },
    );
  });
});

describe('proration: items', () => {
  it('prorates per unit so every line keeps amount = unit_amount x quantity', () => {
    expect(prorateItems([item('a', '10.00', 3), item('b', '0.00', 2)], dec(17).div(31), 'x')).toEqual([
      { index: 0, price_id: 'a', quantity: 3, unit_amount: '5.48', amount: '16.44', description: 'x' },
      { index: 1, price_id: 'b', quantity: 2, unit_amount: '0.00', amount: '0.00', description: 'x' },
    ]);
    expect(prorateItems([item('a', '10.00', 3)], dec(17).div(31), 'credit', -1)[0]).toMatchObject({ unit_amount: '-5.48', amount: '-16.44' });
    expect(itemsTotal([item('a', '10.00', 3), item('b', '0.99', 2)])).toBe('31.98');
    fc.assert(
      fc.property(itemsArb, fc.double({ min: 0, max: 1, noNaN: true }), (items, share) => {
        const f = dec(share);
        for (const l of prorateItems(items, f, 'p')) {
          const it = items[l.index];
          assert.equal(l.amount, multiplyAmount(l.unit_amount, l.quantity));
          assert.ok(dec(l.unit_amount).minus(dec(it.unit_amount).times(f)).abs().lte('0.005'));
          assert.ok(dec(l.unit_amount).lte(it.unit_amount));
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('proration: initial charge', () => {
  const monthly = (start: string, anchor: string, items = [item('m', '31.00')]) => ({ start: d(start), anchor: d(anchor), interval: 'month' as Interval, count: 1, items });

  it('bills per behaviour at a start between billing dates', () => {
    const input = monthly('2026-01-22T00:00:00Z', '2026-02-01T00:00:00Z');
    const prorated = initialCharge('create_prorations', input)!;
    expect(prorated.total).toBe('10.00'); // 10 of 31 days
    expect(prorated.prorated).toBe(true);
    expect(prorated.periodStart.toISOString()).toBe('2026-01-22T00:00:00.000Z');
    expect(prorated.periodEnd.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(prorated.lines).toEqual([{ index: 0, price_id: 'm', quantity: 1, unit_amount: '10.00', amount: '10.00', description: 'Prorated subscription period' }]);
    const always = initialCharge('always_invoice', input)!;
    expect([always.total, always.prorated, always.periodEnd.toISOString()]).toEqual(['31.00', false, '2026-02-01T00:00:00.000Z']);
    expect(initialCharge('none', input)).toBeNull();
  });

  it('bills a full period at a start on the anchor, except none at the subscription start (charges start on the next billing cycle)', () => {
    const onAnchor = monthly('2026-03-31T00:00:00Z', '2026-01-31T00:00:00Z');
    const cases: [ProrationBehavior, boolean][] = [['create_prorations', false], ['always_invoice', false], ['create_prorations', true], ['always_invoice', true], ['none', true]];
    for (const [b, continuing] of cases) {
      const c = initialCharge(b, { ...onAnchor, continuing })!;
      expect([c.total, c.prorated, c.periodEnd.toISOString(), c.lines[0].description]).toEqual(['31.00', false, '2026-04-30T00:00:00.000Z', 'Subscription period']);
    }
    expect(initialCharge('none', onAnchor)).toBeNull();
    expect(initialCharge('none', { ...onAnchor, continuing: false })).toBeNull();
    // Started on the anchor itself (a subscription starting today, anchored on its start).
    expect(initialCharge('none', monthly('2026-01-31T00:00:00Z', '2026-01-31T00:00:00Z'))).toBeNull();
  });

  it('works with an anchor after the start and with several items', () => {
    const c = initialCharge('create_prorations', {
      start: d('2026-01-01T00:00:00Z'),
      anchor: d('2026-06-15T00:00:00Z'),
      interval: 'week',
      count: 2,
      items: [item('a', '14.00', 2), item('b', '7.00')],
    })!;
    // 14-day periods: June 15 minus 11 x 14 days is Jan 12, so 11 of the 14 days remain.
    expect(c.periodEnd.toISOString()).toBe('2026-01-12T00:00:00.000Z');
    expect(c.lines.map((l) => [l.unit_amount, l.amount])).toEqual([
      ['11.00', '22.00'],
      ['5.50', '5.50'],
    ]);
    expect(c.total).toBe('27.50');
  });

  it('never bills more than a full period, and bills exactly the remaining share', () => {
    fc.assert(
      fc.property(
        instantArb,
        fc.integer({ min: -800 * DAY, max: 800 * DAY }),
        fc.constantFrom<Interval>('day', 'week', 'month', 'year'),
        fc.integer({ min: 1, max: 3 }),
        itemsArb,
        fc.constantFrom<ProrationBehavior>('create_prorations', 'always_invoice', 'none'),
        fc.boolean(),
        (anchorMs, offset, interval, count, items, behavior, continuing) => {
          const anchor = new Date(anchorMs);
          const start = new Date(anchorMs + offset);
          const c = initialCharge(behavior, { start, anchor, interval, count, items, continuing });
          const p = periodContaining(anchor, interval, count, start);
          const onCycle = p.start.getTime() === start.getTime();
          if (behavior === 'none' && (!onCycle || !continuing)) return assert.equal(c, null);
          assert.ok(c);
          assert.equal(c.periodEnd.getTime(), p.end.getTime());
          assert.equal(c.periodEnd.getTime(), billingDate(anchor, interval, count, p.index + 1).getTime());
          const full = itemsTotal(items);
          assert.ok(dec(c.total).lte(full));
          if (onCycle || behavior === 'always_invoice') assert.equal(c.total, full);
          else {
            const f = prorationFraction(p.start, p.end, start);
            assert.ok(c.fraction.minus(f).abs().lt('1e-30'));
            const slack = dec('0.005').times(items.reduce((acc, i) => acc + i.quantity, 0));
            assert.ok(dec(c.total).minus(dec(full).times(f)).abs().lte(slack));
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('proration: phase changes and credit', () => {
  const period = { periodStart: d('2026-01-01T00:00:00Z'), periodEnd: d('2026-02-01T00:00:00Z'), changeAt: d('2026-01-11T00:00:00Z') };

  it('credits the unused old items and charges the rest of the period for the new ones', () => {
    const up = phaseChangeProration({ ...period, oldItems: [item('basic', '30.00')], newItems: [item('pro', '60.00')] });
    expect([up.credit, up.charge, up.net]).toEqual(['20.32', '40.65', '20.33']); // 21/31 of each
    expect(up.creditLines).toEqual([{ index: 0, price_id: 'basic', quantity: 1, unit_amount: '-20.32', amount: '-20.32', description: 'Unused time before the phase change' }]);
    expect(up.chargeLines).toEqual([{ index: 0, price_id: 'pro', quantity: 1, unit_amount: '40.65', amount: '40.65', description: 'Prorated subscription period' }]);
    const down = phaseChangeProration({ ...period, oldItems: [item('pro', '60.00')], newItems: [item('basic', '30.00')] });
    expect([down.credit, down.charge, down.net]).toEqual(['40.65', '20.32', '-20.33']);
    const same = phaseChangeProration({ ...period, oldItems: [item('a', '9.99', 7)], newItems: [item('a', '9.99', 7)] });
    expect(same.net).toBe('0.00');
  });

  it('charges the new items over their own period when the interval changes', () => {
    const c = phaseChangeProration({
      periodStart: d('2026-03-01T00:00:00Z'),
      periodEnd: d('2026-04-01T00:00:00Z'),
      changeAt: d('2026-03-15T00:00:00Z'),
      oldItems: [item('monthly', '10.00')],
      newItems: [item('yearly', '100.00')],
      newPeriod: { start: d('2026-01-01T00:00:00Z'), end: d('2027-01-01T00:00:00Z') },
    });
    expect([c.credit, c.charge, c.net]).toEqual(['5.48', '80.00', '74.52']); // 17/31 of 10, 292/365 of 100
  });

  it('never credits more than was billed, and credit plus used time is the billed amount', () => {
    fc.assert(
      fc.property(periodArb, itemsArb, ({ start, end, at }, items) => {
        const { credit, lines, fraction } = unusedCredit({ billedFrom: start, billedTo: end, changeAt: at, items });
        const billed = itemsTotal(items);
        assert.ok(dec(credit).gte(0) && dec(credit).lte(billed));
        assert.ok(fraction.minus(prorationFraction(start, end, at)).abs().lt('1e-30'));
        for (const l of lines) {
          assert.ok(dec(l.amount).lte(0));
          assert.equal(l.amount, multiplyAmount(l.unit_amount, l.quantity));
          // Per unit, computed apart from src/billing: the credit is the unused share of the unit in
          // whole cents (integer arithmetic on the instants, half away from zero), never more than it.
          const [s0, e0, a0] = [start, end, at].map((t) => BigInt(t.getTime()));
          const unused = e0 - (a0 < s0 ? s0 : a0 > e0 ? e0 : a0);
          const unitCents = BigInt(dec(items[l.index].unit_amount).times(100).toFixed(0));
          const expectedCents = (2n * unitCents * unused + (e0 - s0)) / (2n * (e0 - s0));
          assert.equal(l.unit_amount, expectedCents === 0n ? '0.00' : `-${centsToAmount(Number(expectedCents))}`);
          assert.ok(expectedCents <= unitCents);
        }
        assert.equal(lines.reduce((acc, l) => acc.minus(l.amount), dec(0)).toFixed(2), credit);
      }),
      { numRuns: 3000 },
    );
  });

  it('a change to the same items nets to zero, at any instant', () => {
    fc.assert(
      fc.property(periodArb, itemsArb, ({ start, end, at }, items) => {
        const c = phaseChangeProration({ periodStart: start, periodEnd: end, changeAt: at, oldItems: items, newItems: items });
        assert.equal(c.net, '0.00');
        assert.equal(c.credit, c.charge);
      }),
      { numRuns: 2000 },
    );
  });

  it('applies carried credit without ever invoicing a negative amount', () => {
    expect(applyCarriedCredit('9.67', '0.00')).toEqual({ total: '9.67', applied: '0.00', remainingCredit: '0.00' });
    expect(applyCarriedCredit('30.00', '20.33')).toEqual({ total: '9.67', applied: '20.33', remainingCredit: '0.00' });
    expect(applyCarriedCredit('10.00', '25.00')).toEqual({ total: '0.00', applied: '10.00', remainingCredit: '15.00' });
    expect(applyCarriedCredit('-20.33', '1.00')).toEqual({ total: '0.00', applied: '0.00', remainingCredit: '21.33' });
    expect(() => applyCarriedCredit('1.00', '-1.00')).toThrow(RangeError);
  });

  it('conserves money along any chain of charges and credits', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50_000, max: 100_000 }), { maxLength: 40 }), (nets) => {
        let credit = '0.00';
        let invoiced = dec(0);
        for (const cents of nets) {
          const r = applyCarriedCredit(centsToAmount(cents), credit);
          assert.ok(dec(r.total).gte(0));
          assert.ok(dec(r.remainingCredit).gte(0));
          assert.ok(dec(r.applied).lte(credit));
          // total_out - remaining = total_in - credit_in
          assert.ok(dec(r.total).minus(r.remainingCredit).eq(dec(centsToAmount(cents)).minus(credit)));
          // Credit is never kept while something is invoiced.
          assert.ok(dec(r.total).isZero() || dec(r.remainingCredit).isZero());
          credit = r.remainingCredit;
          invoiced = invoiced.plus(r.total);
        }
        const sum = nets.reduce((acc, c) => acc + c, 0);
        assert.equal(invoiced.minus(credit).times(100).toNumber(), sum);
      }),
      { numRuns: 3000 },
    );
  });
});
