/**
 * The pay page's spot prices (the estimate of what to send): one refresher per currency and
 * process asks the oracle at most every SPOT_REFRESH_MS, and only while someone looks; every
 * visitor reads the last price fetched. So polling visitors cost the price API's quota nothing
 * of their own. While the API fails, the last price is shown for SPOT_MAX_AGE_MS, then none.
 */
import type { CryptoCurrency } from '../../cryptocurrency/addresses';
import { SpotEntry, SPOT_MAX_AGE_MS, SPOT_REFRESH_MS, spotEntryAfter, spotPriceShown, spotRefreshDue } from '../../cryptocurrency/priceFreshness';
import { Coalescer } from '../../lib/coalesce';
import { PriceOracle, PriceUnavailableError } from './priceOracle';

export interface SpotPriceOptions {
  refreshMs?: number;
  maxAgeMs?: number;
  /** The refresher's clock (tests pass their own). */
  now?: () => number;
}

export class SpotPrices {
  private readonly entries = new Map<CryptoCurrency, SpotEntry>();
  private readonly refreshes = new Coalescer();
  private readonly refreshMs: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  constructor(private readonly oracle: PriceOracle, opts: SpotPriceOptions = {}) {
    this.refreshMs = opts.refreshMs ?? SPOT_REFRESH_MS;
    this.maxAgeMs = opts.maxAgeMs ?? SPOT_MAX_AGE_MS;
    this.now = opts.now ?? Date.now;
  }

  /** USD per coin as last fetched; null when no recent price is known. Waits only on a refresh that is due. */
  async usdPrice(currency: CryptoCurrency): Promise<string | null> {
    if (spotRefreshDue(this.entries.get(currency), this.now(), this.refreshMs)) await this.refreshes.run(currency, () => this.refresh(currency));
    return spotPriceShown(this.entries.get(currency), this.now(), this.maxAgeMs);
  }

  private async refresh(currency: CryptoCurrency): Promise<void> {
    // Visitors queued behind a refresh find it done.
    if (!spotRefreshDue(this.entries.get(currency), this.now(), this.refreshMs)) return;
    const now = this.now();
    let price: string | null = null;
    try {
      price = await this.oracle.usdPrice(currency, new Date(now));
    } catch (err) {
      if (!(err instanceof PriceUnavailableError)) throw err;
    }
    this.entries.set(currency, spotEntryAfter(this.entries.get(currency), now, price));
  }
}
