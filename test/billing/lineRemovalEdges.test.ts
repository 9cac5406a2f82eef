import { creditReleased, releaseSurplus } from '../../src/billing/lineRemoval';

describe('releaseSurplus', () => {
  it('leaves entries with nothing applied untouched', () => {
    const entries = [
      { id: 'a', transaction_id: 't1', amount_applied: '5.00' },
      { id: 'b', transaction_id: 't2', amount_applied: '0.00' },
    ];
    expect(releaseSurplus(entries, '2.00')).toEqual({
      entries: [{ id: 'a', transaction_id: 't1', amount_applied: '3.00', released_amount: '2.00' }, { id: 'b', transaction_id: 't2', amount_applied: '0.00' }],
      released: '2.00',
    });
  });
});

describe('creditReleased', () => {
  it('leaves an entry the invoice shows equal exactly as it is', () => {
    const a = { _id: 'x', amount_applied: '5.00' };
    const r = creditReleased([a], '0.00', [{ id: 'x', transaction_id: 't', amount_applied: '5.00', released_amount: '1.00' }]);
    expect(r.allocations[0]).toBe(a);
    expect(r).toEqual({ allocations: [{ _id: 'x', amount_applied: '5.00' }], unallocated_amount: '0.00', credited: '0.00' });
  });
});
