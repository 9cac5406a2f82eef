import { derivePaymentStatus, paymentStatusText } from '../../src/cryptocurrency/paymentStatus';

describe('payment status of a claim link', () => {
  it('waiting while nothing is seen and something is open', () => {
    expect(derivePaymentStatus({ invoiceStatuses: ['pending', 'paid'], pending: [] })).toEqual({ state: 'waiting', confirmations: null, confirmations_required: null });
    // A price link covers no invoice: never paid by default.
    expect(derivePaymentStatus({ invoiceStatuses: [], pending: [] }).state).toBe('waiting');
  });

  it('detected with n of N confirmations: the most advanced pending payment, capped at N', () => {
    expect(derivePaymentStatus({ invoiceStatuses: ['pending'], pending: [{ block_height: 100, scanned_height: 100, required: 2 }] })).toEqual({
      state: 'detected',
      confirmations: 1,
      confirmations_required: 2,
    });
    const two = derivePaymentStatus({
      invoiceStatuses: ['overdue'],
      pending: [
        { block_height: 100, scanned_height: 105, required: 12 },
        { block_height: 90, scanned_height: 105, required: 12 },
      ],
    });
    expect(two).toMatchObject({ confirmations: 12, confirmations_required: 12 });
    // A watcher behind the payment's block (no cursor yet) still counts the block itself.
    expect(derivePaymentStatus({ invoiceStatuses: [], pending: [{ block_height: 7, scanned_height: null, required: 2 }] })).toMatchObject({ state: 'detected', confirmations: 1 });
  });

  it('paid when every covered invoice is paid, whatever is still pending on chain', () => {
    expect(derivePaymentStatus({ invoiceStatuses: ['paid', 'paid'], pending: [{ block_height: 1, scanned_height: 1, required: 2 }] }).state).toBe('paid');
  });

  it('says each state in words', () => {
    expect(paymentStatusText({ state: 'waiting', confirmations: null, confirmations_required: null })).toMatch(/Waiting/);
    expect(paymentStatusText({ state: 'detected', confirmations: 1, confirmations_required: 2 })).toMatch(/1 of 2 confirmations/);
    expect(paymentStatusText({ state: 'paid', confirmations: null, confirmations_required: null })).toMatch(/^Paid/);
  });
});
