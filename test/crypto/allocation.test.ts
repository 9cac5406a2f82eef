import fc from 'fast-check';
import { allocatePayment, applyAllocations, orderInvoices, OpenInvoice, AllocationResult } from '../../src/cryptocurrency/allocation';

/** Money string <-> integer cents, independent of the module under test. */
const cents = (s: string): number => {
  if (!/^\d+\.\d{2}$/.test(s)) throw new Error(`not a money string: ${s}`);
  const [i, f] = s.split('.');
  return Number(i) * 100 + Number(f);
};
/**
 * Plain assertions for the property loops: Jest's expect() is too slow for thousands of
 * runs with dozens of checks each. A failure throws, and fast-check shrinks and reports it.
 */
function check(cond: boolean, what: string, ...ctx: unknown[]): asserts cond {
  if (!cond) throw new Error(`${what}: ${JSON.stringify(ctx)}`);
}
const same = (a: unknown, b: unknown, what: string) => check(JSON.stringify(a) === JSON.stringify(b), what, a, b);

const money = (c: number): string => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;

const inv = (id: string, due_date: string, balance: string, created_at = '2026-01-01T00:00:00.000Z', total?: string): OpenInvoice => ({
  id,
  due_date,
  created_at,
  balance,
  ...(total !== undefined ? { total } : {}),
});

describe('allocatePayment, customer mode', () => {
  const invoices = [
    inv('inv_c', '2026-03-01', '30.00'),
    inv('inv_a', '2026-01-15', '100.00'),
    inv('inv_b', '2026-02-01', '50.00'),
  ];
  const run = (paymentUsd: string, open = invoices, slippage = '0.005') => allocatePayment({ paymentUsd, openInvoices: open, slippage, mode: 'customer' });

  it('pays oldest due date first and keeps the rest as credit', () => {
    expect(run('200.00')).toEqual({
      allocations: [
        { invoice_id: 'inv_a', amount_applied: '100.00', pays_in_full: true },
        { invoice_id: 'inv_b', amount_applied: '50.00', pays_in_full: true },
        { invoice_id: 'inv_c', amount_applied: '30.00', pays_in_full: true },
      ],
      unallocated: '20.00',
    });
  });

  it('a partial payment reduces the next invoice without paying it', () => {
    expect(run('120.00')).toEqual({
      allocations: [
        { invoice_id: 'inv_a', amount_applied: '100.00', pays_in_full: true },
        { invoice_id: 'inv_b', amount_applied: '20.00', pays_in_full: false },
      ],
      unallocated: '0.00',
    });
  });

  it('an underpayment within slippage pays the invoice with what there is', () => {
    // 0.5% of 100.00 is 0.50: 99.50 pays, 99.49 does not.
    expect(run('99.50')).toEqual({ allocations: [{ invoice_id: 'inv_a', amount_applied: '99.50', pays_in_full: true }], unallocated: '0.00' });
    expect(run('99.49')).toEqual({ allocations: [{ invoice_id: 'inv_a', amount_applied: '99.49', pays_in_full: false }], unallocated: '0.00' });
    // The same applies to a later invoice reached with the rest: 149.75 = 100 + 49.75 (0.5% of 50 = 0.25).
    expect(run('149.75').allocations[1]).toEqual({ invoice_id: 'inv_b', amount_applied: '49.75', pays_in_full: true });
    expect(run('149.74').allocations[1]).toEqual({ invoice_id: 'inv_b', amount_applied: '49.74', pays_in_full: false });
  });

  it('with a total given, the margin is relative to the whole invoice', () => {
    // Invoice of 100.00 with 40.00 left: 0.5% of 100 = 0.50, so 39.50 pays it.
    const open = [inv('inv_x', '2026-01-01', '40.00', undefined, '100.00')];
    expect(run('39.50', open).allocations).toEqual([{ invoice_id: 'inv_x', amount_applied: '39.50', pays_in_full: true }]);
    expect(run('39.49', open).allocations).toEqual([{ invoice_id: 'inv_x', amount_applied: '39.49', pays_in_full: false }]);
    // Without the total, 0.5% of 40.00 = 0.20.
    expect(run('39.79', [inv('inv_x', '2026-01-01', '40.00')]).allocations[0].pays_in_full).toBe(false);
    expect(run('39.80', [inv('inv_x', '2026-01-01', '40.00')]).allocations[0].pays_in_full).toBe(true);
  });

  it('breaks due-date ties by created_at, then id, and skips settled balances', () => {
    const open = [
      inv('inv_2', '2026-01-01', '10.00', '2026-01-01T00:00:01.000Z'),
      inv('inv_3', '2026-01-01', '10.00', '2026-01-01T00:00:00.000Z'),
      inv('inv_1', '2026-01-01', '10.00', '2026-01-01T00:00:01.000Z'),
      inv('inv_0', '2025-12-01', '0.00'),
    ];
    expect(orderInvoices(open).map((i) => i.id)).toEqual(['inv_0', 'inv_3', 'inv_1', 'inv_2']);
    expect(run('25.00', open).allocations.map((a) => [a.invoice_id, a.amount_applied, a.pays_in_full])).toEqual([
      ['inv_3', '10.00', true],
      ['inv_1', '10.00', true],
      ['inv_2', '5.00', false],
    ]);
  });

  it('handles no invoices, zero payments and sub-cent payment values', () => {
    expect(run('12.34', [])).toEqual({ allocations: [], unallocated: '12.34' });
    expect(run('0')).toEqual({ allocations: [], unallocated: '0.00' });
    expect(run('0.004')).toEqual({ allocations: [], unallocated: '0.00' });
    // 100.005 is 100.01 to the cent (half-up): the cent left over goes to the next invoice.
    expect(run('100.005')).toEqual({
      allocations: [
        { invoice_id: 'inv_a', amount_applied: '100.00', pays_in_full: true },
        { invoice_id: 'inv_b', amount_applied: '0.01', pays_in_full: false },
      ],
      unallocated: '0.00',
    });
    expect(run('180.005', invoices)).toEqual(expect.objectContaining({ unallocated: '0.01' }));
  });

  it('rejects invalid input', () => {
    expect(() => run('-1.00')).toThrow();
    expect(() => run('abc')).toThrow();
    expect(() => run('1.00', invoices, '1')).toThrow();
    expect(() => run('1.00', invoices, '-0.1')).toThrow();
    expect(() => allocatePayment({ paymentUsd: '1', openInvoices: [], slippage: '0', mode: 'other' as 'customer' })).toThrow();
  });
});

describe('allocatePayment, account mode', () => {
  const open = [
    inv('inv_new', '2026-02-01', '100.00'),
    inv('inv_old', '2026-01-01', '100.00'),
    inv('inv_small', '2025-12-01', '40.00'),
  ];
  const run = (paymentUsd: string, slippage = '0.005') => allocatePayment({ paymentUsd, openInvoices: open, slippage, mode: 'account' });

  it('matches the oldest invoice whose balance equals the value within slippage', () => {
    expect(run('100.00')).toEqual({ allocations: [{ invoice_id: 'inv_old', amount_applied: '100.00', pays_in_full: true }], unallocated: '0.00' });
    expect(run('99.50')).toEqual({ allocations: [{ invoice_id: 'inv_old', amount_applied: '99.50', pays_in_full: true }], unallocated: '0.00' });
    expect(run('100.50')).toEqual({ allocations: [{ invoice_id: 'inv_old', amount_applied: '100.00', pays_in_full: true }], unallocated: '0.50' });
    expect(run('40.10')).toEqual({ allocations: [{ invoice_id: 'inv_small', amount_applied: '40.00', pays_in_full: true }], unallocated: '0.10' });
  });

  it('leaves everything unallocated when nothing matches', () => {
    expect(run('99.49')).toEqual({ allocations: [], unallocated: '99.49' });
    expect(run('100.51')).toEqual({ allocations: [], unallocated: '100.51' });
    expect(run('140.00')).toEqual({ allocations: [], unallocated: '140.00' });
    expect(run('0.00')).toEqual({ allocations: [], unallocated: '0.00' });
    expect(run('100.01', '0')).toEqual({ allocations: [], unallocated: '100.01' });
  });
});

// ---- properties -------------------------------------------------------------------------

const openInvoicesArb = fc
  .array(
    fc.record({
      due: fc.integer({ min: 1, max: 28 }),
      created: fc.integer({ min: 0, max: 5 }),
      balance: fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 9, arbitrary: fc.integer({ min: 1, max: 500_000 }) }),
      totalExtra: fc.option(fc.integer({ min: 0, max: 500_000 }), { nil: undefined }),
    }),
    { maxLength: 12 },
  )
  .map((rows) =>
    rows.map((r, i) =>
      inv(
        `inv_${String(i).padStart(2, '0')}`,
        `2026-01-${String(r.due).padStart(2, '0')}`,
        money(r.balance),
        `2026-01-01T00:00:0${r.created}.000Z`,
        r.totalExtra === undefined ? undefined : money(r.balance + r.totalExtra),
      ),
    ),
  );
const paymentArb = fc.oneof(fc.integer({ min: 0, max: 3_000_000 }), fc.integer({ min: 0, max: 2_000 }));
const permilleArb = fc.integer({ min: 0, max: 50 }); // slippage 0% .. 5%

/** Reference order with plain comparisons. */
function refOrder(open: OpenInvoice[]): OpenInvoice[] {
  return [...open].sort((a, b) => (a.due_date !== b.due_date ? (a.due_date < b.due_date ? -1 : 1) : a.created_at !== b.created_at ? (a.created_at < b.created_at ? -1 : 1) : a.id < b.id ? -1 : 1));
}

/** Integer reference of the "paid within slippage" test: remaining >= balance - permille/1000 * (total ?? balance). */
const withinSlippage = (remaining: number, balance: number, base: number, permille: number) => remaining * 1000 >= balance * 1000 - permille * base;

function checkInvariants(open: OpenInvoice[], payment: number, r: AllocationResult) {
  const byId = new Map(open.map((i) => [i.id, i]));
  let applied = 0;
  const seen = new Set<string>();
  for (const a of r.allocations) {
    const i = byId.get(a.invoice_id)!;
    check(i !== undefined, 'known invoice');
    check(!(seen.has(a.invoice_id)), 'expected false: seen.has(a.invoice_id)');
    seen.add(a.invoice_id);
    const amt = cents(a.amount_applied);
    check(amt > 0, 'amt > 0', amt, 0);
    check(amt <= cents(i.balance), 'amt <= cents(i.balance)', amt, cents(i.balance)); // never over-applied
    applied += amt;
  }
  check(cents(r.unallocated) >= 0, 'cents(r.unallocated) >= 0', cents(r.unallocated), 0);
  same(applied + cents(r.unallocated), payment, 'applied + cents(r.unallocated)'); // exact conservation
}

describe('allocation properties', () => {
  it('customer mode: conservation, no over-application, oldest-first, slippage rule, idempotent leftover', () => {
    fc.assert(
      fc.property(openInvoicesArb, paymentArb, permilleArb, (open, payment, permille) => {
        const slippage = (permille / 1000).toFixed(3);
        const r = allocatePayment({ paymentUsd: money(payment), openInvoices: open, slippage, mode: 'customer' });
        checkInvariants(open, payment, r);

        // Oldest-first: the allocations are exactly a prefix of the payable invoices in order,
        // each fully applied except possibly the last one.
        const payable = refOrder(open).filter((i) => cents(i.balance) > 0);
        same(r.allocations.map((a) => a.invoice_id), payable.slice(0, r.allocations.length).map((i) => i.id), 'r.allocations.map((a) => a.invoice_id)');
        let remaining = payment;
        r.allocations.forEach((a, k) => {
          const i = payable[k];
          const bal = cents(i.balance);
          const base = i.total !== undefined ? cents(i.total) : bal;
          const amt = cents(a.amount_applied);
          same(amt, Math.min(bal, remaining), 'amt');
          same(a.pays_in_full, withinSlippage(remaining, bal, base, permille), 'a.pays_in_full');
          if (k < r.allocations.length - 1) same(amt, bal, 'amt');
          remaining -= amt;
        });
        // Money is left over only when every payable invoice got paid.
        if (cents(r.unallocated) > 0) {
          same(r.allocations.length, payable.length, 'r.allocations.length');
          check(r.allocations.every((a) => a.pays_in_full), 'expected true: r.allocations.every((a) => a.pays_in_full)');
        }
        // Everything stops at the first unpaid invoice, and the payment was used up there.
        const firstUnpaid = r.allocations.findIndex((a) => !a.pays_in_full);
        if (firstUnpaid >= 0) {
          same(firstUnpaid, r.allocations.length - 1, 'firstUnpaid');
          same(cents(r.unallocated), 0, 'cents(r.unallocated)');
        }

        // Allocating the leftover again against the updated invoices changes nothing.
        const after = applyAllocations(open, r);
        for (const i of after) check(cents(i.balance) >= 0, 'cents(i.balance) >= 0', cents(i.balance), 0);
        const again = allocatePayment({ paymentUsd: r.unallocated, openInvoices: after, slippage, mode: 'customer' });
        same(again.allocations, [], 'again.allocations');
        same(again.unallocated, r.unallocated, 'again.unallocated');
      }),
      { numRuns: 5000 },
    );
  });

  it('account mode: conservation, at most one match, the oldest within slippage', () => {
    fc.assert(
      fc.property(openInvoicesArb, paymentArb, permilleArb, fc.nat(), (open, payment0, permille, pick) => {
        // Bias the payment towards an existing balance so that matches happen.
        const payable = refOrder(open).filter((i) => cents(i.balance) > 0);
        const payment = payable.length > 0 && pick % 2 === 0 ? Math.max(0, cents(payable[pick % payable.length].balance) + ((pick >> 1) % 401) - 200) : payment0;
        const slippage = (permille / 1000).toFixed(3);
        const r = allocatePayment({ paymentUsd: money(payment), openInvoices: open, slippage, mode: 'account' });
        checkInvariants(open, payment, r);
        check(r.allocations.length <= 1, 'r.allocations.length <= 1', r.allocations.length, 1);
        const matches = (i: OpenInvoice) => {
          const bal = cents(i.balance);
          const base = i.total !== undefined ? cents(i.total) : bal;
          return payment > 0 && Math.abs(payment - bal) * 1000 <= permille * base;
        };
        const expected = payable.find(matches);
        if (!expected) {
          same(r.allocations, [], 'r.allocations');
          same(r.unallocated, money(payment), 'r.unallocated');
        } else {
          same(r.allocations, [{ invoice_id: expected.id, amount_applied: money(Math.min(payment, cents(expected.balance))), pays_in_full: true }], 'r.allocations');
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('a sequence of payments never applies more than an invoice owed in total', () => {
    fc.assert(
      fc.property(openInvoicesArb, fc.array(paymentArb, { minLength: 1, maxLength: 8 }), permilleArb, (open, payments, permille) => {
        const slippage = (permille / 1000).toFixed(3);
        const owed = new Map(open.map((i) => [i.id, cents(i.balance)]));
        const appliedTo = new Map<string, number>();
        const paid = new Set<string>();
        let current = open;
        for (const p of payments) {
          const r = allocatePayment({ paymentUsd: money(p), openInvoices: current, slippage, mode: 'customer' });
          checkInvariants(current, p, r);
          for (const a of r.allocations) {
            check(!(paid.has(a.invoice_id)), 'expected false: paid.has(a.invoice_id)'); // a paid invoice is never paid again
            appliedTo.set(a.invoice_id, (appliedTo.get(a.invoice_id) ?? 0) + cents(a.amount_applied));
            if (a.pays_in_full) paid.add(a.invoice_id);
          }
          current = applyAllocations(current, r);
        }
        for (const [id, total] of appliedTo) check(total <= owed.get(id)!, 'total <= owed.get(id)!', total, owed.get(id)!);
      }),
      { numRuns: 2000 },
    );
  });

  it('does not depend on the input order of the invoices', () => {
    fc.assert(
      fc.property(openInvoicesArb.chain((o) => fc.tuple(fc.constant(o), fc.shuffledSubarray(o, { minLength: o.length, maxLength: o.length }))), paymentArb, ([open, shuffled], payment) => {
        const a = allocatePayment({ paymentUsd: money(payment), openInvoices: open, slippage: '0.005', mode: 'customer' });
        const b = allocatePayment({ paymentUsd: money(payment), openInvoices: shuffled, slippage: '0.005', mode: 'customer' });
        same(b, a, 'b');
      }),
      { numRuns: 1000 },
    );
  });
});
