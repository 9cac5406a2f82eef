import { afterLinesRemoved, amountDue, creditReleased, releaseSurplus } from '../../src/billing/lineRemoval';

describe('an invoice after line items are removed', () => {
  it('keeps an open invoice open while what was paid does not cover the new total', () => {
    expect(afterLinesRemoved({ status: 'pending', amount_paid: '30.00' }, ['40.00'], '0.005')).toEqual({ total_amount: '40.00', status: 'pending', surplus: '0.00' });
    expect(afterLinesRemoved({ status: 'overdue', amount_paid: '0.00' }, ['10.00', '5.50'], '0.005')).toEqual({ total_amount: '15.50', status: 'overdue', surplus: '0.00' });
  });

  it('settles an open invoice as paid when what was paid reaches the new total (within slippage), with the surplus beyond it', () => {
    expect(afterLinesRemoved({ status: 'pending', amount_paid: '70.00' }, ['40.00'], '0.005')).toEqual({ total_amount: '40.00', status: 'paid', surplus: '30.00' });
    expect(afterLinesRemoved({ status: 'overdue', amount_paid: '40.00' }, ['40.00'], '0.005')).toEqual({ total_amount: '40.00', status: 'paid', surplus: '0.00' });
    // 0.5% of 40.00 is 0.20: 39.80 paid is in full, as an allocation would count it.
    expect(afterLinesRemoved({ status: 'pending', amount_paid: '39.80' }, ['40.00'], '0.005').status).toBe('paid');
    expect(afterLinesRemoved({ status: 'pending', amount_paid: '39.79' }, ['40.00'], '0.005').status).toBe('pending');
    // Every line gone after a payment: all of it is surplus.
    expect(afterLinesRemoved({ status: 'pending', amount_paid: '12.00' }, [], '0.005')).toEqual({ total_amount: '0.00', status: 'paid', surplus: '12.00' });
  });

  it('leaves an unpaid invoice with no lines open, and paid or canceled invoices as they are', () => {
    expect(afterLinesRemoved({ status: 'pending', amount_paid: '0.00' }, [], '0.005')).toEqual({ total_amount: '0.00', status: 'pending', surplus: '0.00' });
    expect(afterLinesRemoved({ status: 'paid', amount_paid: '100.00' }, ['40.00'], '0.005')).toEqual({ total_amount: '40.00', status: 'paid', surplus: '60.00' });
    expect(afterLinesRemoved({ status: 'canceled', amount_paid: '70.00' }, ['40.00'], '0.005')).toEqual({ total_amount: '40.00', status: 'canceled', surplus: '30.00' });
  });

  it('never has an amount due below zero', () => {
    expect(amountDue('100.00', '30.00')).toBe('70.00');
    expect(amountDue('40.00', '40.00')).toBe('0.00');
    expect(amountDue('40.00', '70.00')).toBe('0.00');
  });
});

describe('the surplus released from an invoice and credited to its transactions', () => {
  const e = (id: string, tx: string, amount: string, released?: string) => ({ id, transaction_id: tx, amount_applied: amount, ...(released ? { released_amount: released } : {}) });

  it('takes the surplus from the newest allocations first, recording what each released', () => {
    expect(releaseSurplus([e('a', 't1', '30.00'), e('b', 't2', '40.00')], '50.00')).toEqual({
      entries: [e('a', 't1', '20.00', '10.00'), e('b', 't2', '0.00', '40.00')],
      released: '50.00',
    });
    // A second release adds to what an entry released before.
    expect(releaseSurplus([e('a', 't1', '20.00', '20.00')], '5.00').entries).toEqual([e('a', 't1', '15.00', '25.00')]);
    // Never more than the entries hold.
    expect(releaseSurplus([e('a', 't1', '10.00')], '12.00')).toEqual({ entries: [e('a', 't1', '0.00', '10.00')], released: '10.00' });
    expect(releaseSurplus([], '12.00').released).toBe('0.00');
  });

  it('credits a transaction by copying the invoice side, so a replay credits nothing', () => {
    const tx = [{ _id: 'a', amount_applied: '30.00' }, { _id: 'x', amount_applied: '5.00' }];
    const once = creditReleased(tx, '2.00', [e('a', 't1', '20.00', '10.00')]);
    expect(once).toEqual({ allocations: [{ _id: 'a', amount_applied: '20.00', released_amount: '10.00' }, { _id: 'x', amount_applied: '5.00' }], unallocated_amount: '12.00', credited: '10.00' });
    expect(creditReleased(once.allocations, once.unallocated_amount, [e('a', 't1', '20.00', '10.00')])).toEqual({ ...once, credited: '0.00' });
    // An invoice entry above the transaction's is no release.
    expect(creditReleased(tx, '2.00', [e('a', 't1', '35.00')]).credited).toBe('0.00');
  });
});
