import { afterLinesRemoved, amountDue } from '../../src/billing/lineRemoval';

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
