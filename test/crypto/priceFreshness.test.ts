import {
  PRICE_FAILURE_BACKOFF_MS,
  SPOT_MAX_AGE_MS,
  SPOT_REFRESH_MS,
  priceFailureBackoffMs,
  spotEntryAfter,
  spotPriceShown,
  spotRefreshDue,
} from '../../src/cryptocurrency/priceFreshness';

describe('price freshness rules', () => {
  it('a failed lookup waits 5 s, doubling to at most 60 s', () => {
    expect([1, 2, 3, 4, 5, 6, 1000].map((n) => priceFailureBackoffMs(n))).toEqual([5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000]);
    expect(priceFailureBackoffMs(0)).toBe(PRICE_FAILURE_BACKOFF_MS);
  });

  it('the spot price: refreshed once an interval after the last try, kept through failures until too old', () => {
    expect(spotRefreshDue(undefined, 0)).toBe(true);
    const fetched = spotEntryAfter(undefined, 1_000, '50000');
    expect(fetched).toEqual({ price: '50000', fetchedAt: 1_000, attemptedAt: 1_000 });
    expect(spotRefreshDue(fetched, 1_000 + SPOT_REFRESH_MS - 1)).toBe(false);
    expect(spotRefreshDue(fetched, 1_000 + SPOT_REFRESH_MS)).toBe(true);
    // A failed refresh keeps the last price and counts as a try.
    const failed = spotEntryAfter(fetched, 1_000 + SPOT_REFRESH_MS, null);
    expect(failed).toEqual({ price: '50000', fetchedAt: 1_000, attemptedAt: 1_000 + SPOT_REFRESH_MS });
    expect(spotRefreshDue(failed, 1_000 + SPOT_REFRESH_MS + 1)).toBe(false);
    expect(spotPriceShown(failed, 1_000 + SPOT_MAX_AGE_MS)).toBe('50000');
    expect(spotPriceShown(failed, 1_000 + SPOT_MAX_AGE_MS + 1)).toBeNull();
    expect(spotPriceShown(spotEntryAfter(undefined, 0, null), 0)).toBeNull();
  });
});
