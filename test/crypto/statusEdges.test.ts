import { derivePaymentStatus } from '../../src/cryptocurrency/paymentStatus';
import { spotPriceShown } from '../../src/cryptocurrency/priceFreshness';

describe('derivePaymentStatus: the most confirmed pending payment, relative to its threshold', () => {
  it('keeps the first of two payments equally far along', () => {
    const pending = [
      { block_height: 10, scanned_height: 10, required: 2 }, // 1 of 2
      { block_height: 9, scanned_height: 10, required: 4 }, // 2 of 4
    ];
    expect(derivePaymentStatus({ invoiceStatuses: ['open'], pending })).toEqual({ state: 'detected', confirmations: 1, confirmations_required: 2 });
    expect(derivePaymentStatus({ invoiceStatuses: ['open'], pending: [...pending].reverse() })).toEqual({ state: 'detected', confirmations: 2, confirmations_required: 4 });
  });

  it('picks the one further along, whichever comes first', () => {
    const behind = { block_height: 10, scanned_height: 10, required: 6 }; // 1 of 6
    const ahead = { block_height: 9, scanned_height: 10, required: 3 }; // 2 of 3
    for (const pending of [[behind, ahead], [ahead, behind]]) {
      expect(derivePaymentStatus({ invoiceStatuses: [], pending })).toEqual({ state: 'detected', confirmations: 2, confirmations_required: 3 });
    }
  });
});

describe('spotPriceShown', () => {
  it('shows nothing without an entry, a price or a fetch time', () => {
    expect(spotPriceShown(undefined, 0)).toBeNull();
    expect(spotPriceShown({ price: '50000', fetchedAt: null, attemptedAt: 0 }, 0)).toBeNull();
    expect(spotPriceShown({ price: null, fetchedAt: 0, attemptedAt: 0 }, 0)).toBeNull();
    expect(spotPriceShown({ price: '50000', fetchedAt: 0, attemptedAt: 0 }, 0)).toBe('50000');
  });
});
