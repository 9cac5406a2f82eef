import { allocatePayment, applyAllocations, orderInvoices, OpenInvoice } from '../../src/cryptocurrency/allocation';

const inv = (id: string, due_date: string, created_at: string, balance = '10.00'): OpenInvoice => ({ id, due_date, created_at, balance });

describe('orderInvoices', () => {
  it('orders by due date, then creation instant, then the created_at text, then id', () => {
    const ids = (xs: OpenInvoice[]) => orderInvoices(xs).map((i) => i.id);
    // The same instant written two ways ties on the instant; the text then decides.
    expect(ids([inv('b', '2026-01-01', '2026-01-01T00:00:00.000Z'), inv('a', '2026-01-01', '2026-01-01T00:00:00Z')])).toEqual(['b', 'a']);
    expect(ids([inv('a', '2026-01-01', '2026-01-01T00:00:00Z'), inv('b', '2026-01-01', '2026-01-01T00:00:00.000Z')])).toEqual(['b', 'a']);
    // An earlier instant first, even when its text sorts later (another offset).
    expect(ids([inv('a', '2026-01-01', '2026-01-01T01:00:00Z'), inv('b', '2026-01-01', '2026-01-01T01:30:00+01:00')])).toEqual(['b', 'a']);
    expect(ids([inv('b', '2026-01-01', '2026-01-01T01:30:00+01:00'), inv('a', '2026-01-01', '2026-01-01T01:00:00Z')])).toEqual(['b', 'a']);
    // Unparseable timestamps compare as text.
    expect(ids([inv('a', '2026-01-01', 'zz'), inv('b', '2026-01-01', 'yy')])).toEqual(['b', 'a']);
    expect(ids([inv('b', '2026-01-01', 'yy'), inv('a', '2026-01-01', 'zz')])).toEqual(['b', 'a']);
    expect(ids([inv('a', '2026-01-01', 'yy'), inv('b', '2026-01-01', '2026-01-01T00:00:00Z')])).toEqual(['b', 'a']);
    expect(ids([inv('b', '2026-01-01', '2026-01-01T00:00:00Z'), inv('a', '2026-01-01', 'yy')])).toEqual(['b', 'a']);
    // Then the id; then the due date before anything else.
    expect(ids([inv('b', '2026-01-01', 'x'), inv('a', '2026-01-01', 'x'), inv('c', '2026-01-01', 'x')])).toEqual(['a', 'b', 'c']);
    expect(ids([inv('a', '2026-01-02', '2020-01-01T00:00:00Z'), inv('b', '2026-01-01', '2026-01-01T00:00:00Z')])).toEqual(['b', 'a']);
    expect(ids([inv('b', '2026-01-01', '2026-01-01T00:00:00Z'), inv('a', '2026-01-02', '2020-01-01T00:00:00Z')])).toEqual(['b', 'a']);
  });
});

describe('allocatePayment errors', () => {
  const base = { openInvoices: [inv('a', '2026-01-01', '2026-01-01T00:00:00Z')], slippage: '0', mode: 'customer' as const };
  it('name the bad input', () => {
    expect(() => allocatePayment({ ...base, paymentUsd: '-1' })).toThrow(new RangeError('paymentUsd must not be negative'));
    expect(() => allocatePayment({ ...base, paymentUsd: '1', slippage: 'x' })).toThrow(new TypeError('slippage must be a decimal string, got "x"'));
    expect(() => allocatePayment({ ...base, paymentUsd: '1', slippage: '1' })).toThrow(new RangeError('slippage must be a fraction with 0 <= slippage < 1'));
    expect(() => allocatePayment({ ...base, paymentUsd: '1', openInvoices: [{ ...base.openInvoices[0], total: 'x' }], slippage: '0.1' })).toThrow(
      new TypeError('total must be a decimal string, got "x"'),
    );
    expect(() => allocatePayment({ ...base, paymentUsd: '1', mode: 'other' as 'customer' })).toThrow(new RangeError('unknown allocation mode other'));
  });
});

describe('applyAllocations', () => {
  it('keeps untouched invoices, drops those paid in full, reduces those paid in part', () => {
    const open = [inv('a', '2026-01-01', 'x', '10.00'), inv('b', '2026-01-02', 'x', '10.00'), inv('c', '2026-01-03', 'x', '10.00')];
    const result = { allocations: [{ invoice_id: 'a', amount_applied: '10.00', pays_in_full: true }, { invoice_id: 'b', amount_applied: '4.00', pays_in_full: false }], unallocated: '0.00' };
    expect(applyAllocations(open, result)).toEqual([{ ...open[1], balance: '6.00' }, open[2]]);
    // An invoice within slippage counts as paid in full even though a balance would remain.
    expect(applyAllocations(open, { allocations: [{ invoice_id: 'a', amount_applied: '9.99', pays_in_full: true }], unallocated: '0.00' })).toEqual([open[1], open[2]]);
  });
});
