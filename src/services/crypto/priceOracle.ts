/**
 * USD prices of BTC and ETH at a moment, behind one interface. The fixed-rate table is the
 * embedded default; `PRICE_ORACLE=coingecko` selects the HTTP provider (`priceOracleFromConfig`).
 * Start-up puts the configured one, cached per (currency, minute), in the process's
 * dependencies (src/dependencies.ts), and the pay page's spot prices on top of it
 * (src/services/crypto/spotPrices.ts); tests pass their own.
 */
import type { CryptoCurrency } from '../../cryptocurrency/addresses';
import type { Config } from '../../config';
import { Coalescer } from '../../lib/coalesce';
import { priceFailureBackoffMs } from '../../cryptocurrency/priceFreshness';

export interface PriceOracle {
  /** USD per coin at `at`, as a decimal string. Throws PriceUnavailableError when it cannot say. */
  usdPrice(currency: CryptoCurrency, at: Date): Promise<string>;
  /**
   * What `usdPrice` would answer, when this process has it at hand without asking anyone (a fixed
   * rate, a price in its cache); else null. A transaction is priced as it is recorded when this
   * answers, so its allocation has no price of its own to write.
   */
  knownPrice?(currency: CryptoCurrency, at: Date): string | null;
}

export class PriceUnavailableError extends Error {}

/** The embedded default rates (USD per coin). Change here or pass another table. */
export const DEFAULT_FIXED_RATES: Readonly<Record<CryptoCurrency, string>> = { BTC: '50000.00', ETH: '3000.00' };

export class FixedRateOracle implements PriceOracle {
  constructor(private readonly rates: Readonly<Record<CryptoCurrency, string>> = DEFAULT_FIXED_RATES) {}
  async usdPrice(currency: CryptoCurrency): Promise<string> {
    const rate = this.rates[currency];
    if (!rate) throw new PriceUnavailableError(`no rate for ${currency}`);
    return rate;
  }
  knownPrice(currency: CryptoCurrency): string | null {
    return this.rates[currency] ?? null;
  }
}

export interface CachedOracleOptions {
  maxEntries?: number;
  /** The clock failures are backed off by (tests pass their own). */
  now?: () => number;
}

/** A failed lookup of a key, answered from memory until `until`. */
interface Failure {
  message: string;
  failures: number;
  until: number;
}

/** One cached price per currency and UTC minute of the moment asked about. */
const cacheKey = (currency: CryptoCurrency, at: Date) => `${currency}:${Math.floor(at.getTime() / 60_000)}`;

/**
 * Wraps an oracle with a cache keyed by (currency, UTC minute of `at`). Concurrent lookups of a
 * key share one upstream call, and a failed one is answered from memory for a backoff
 * (priceFailureBackoffMs: 5 s doubling to 60 s), so neither a burst nor an outage costs the
 * price API's quota call for call; the backoff is short so that a retried allocation gets its price.
 */
export class CachedOracle implements PriceOracle {
  private readonly prices = new Map<string, string>();
  private readonly failures = new Map<string, Failure>();
  private readonly lookups = new Coalescer<string>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  constructor(private readonly inner: PriceOracle, opts: CachedOracleOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  usdPrice(currency: CryptoCurrency, at: Date): Promise<string> {
    const key = cacheKey(currency, at);
    // A caller queued behind a lookup finds its answer here rather than asking again.
    return this.remembered(key) ?? this.lookups.run(key, () => this.remembered(key) ?? this.lookUp(key, currency, at));
  }

  knownPrice(currency: CryptoCurrency, at: Date): string | null {
    return this.prices.get(cacheKey(currency, at)) ?? this.inner.knownPrice?.(currency, at) ?? null;
  }

  /** A price, or a failure still within its backoff; null when upstream is to be asked. */
  private remembered(key: string): Promise<string> | null {
    const price = this.prices.get(key);
    if (price !== undefined) return Promise.resolve(price);
    const failed = this.failures.get(key);
    const now = this.now();
    if (failed && now < failed.until) {
      return Promise.reject(new PriceUnavailableError(`${failed.message} (asked again in ${Math.ceil((failed.until - now) / 1000)} s)`));
    }
    return null;
  }

  private async lookUp(key: string, currency: CryptoCurrency, at: Date): Promise<string> {
    try {
      const price = await this.inner.usdPrice(currency, at);
      this.failures.delete(key);
      if (this.prices.size >= this.maxEntries) this.prices.clear();
      this.prices.set(key, price);
      return price;
    } catch (err) {
      if (err instanceof PriceUnavailableError) {
        const failures = (this.failures.get(key)?.failures ?? 0) + 1;
        if (this.failures.size >= this.maxEntries) this.failures.clear();
        this.failures.set(key, { message: err.message, failures, until: this.now() + priceFailureBackoffMs(failures) });
      }
      throw err;
    }
  }
}

const COINGECKO_IDS: Record<CryptoCurrency, string> = { BTC: 'bitcoin', ETH: 'ethereum' };

/**
 * CoinGecko's historical range API (`/coins/{id}/market_chart/range?vs_currency=usd&from&to`,
 * answer `{prices: [[ms, price], ...]}`): the sample closest to `at` within a window of
 * +-`windowMinutes`. The API key, when given, goes in `x-cg-pro-api-key`.
 */
export class CoinGeckoOracle implements PriceOracle {
  constructor(
    private readonly baseUrl = 'https://api.coingecko.com/api/v3',
    private readonly apiKey?: string,
    private readonly windowMinutes = 60,
    private readonly timeoutMs = 10_000,
  ) {}
  async usdPrice(currency: CryptoCurrency, at: Date): Promise<string> {
    const id = COINGECKO_IDS[currency];
    const from = Math.floor(at.getTime() / 1000) - this.windowMinutes * 60;
    const to = Math.floor(at.getTime() / 1000) + this.windowMinutes * 60;
    const url = `${this.baseUrl.replace(/\/+$/, '')}/coins/${id}/market_chart/range?vs_currency=usd&from=${from}&to=${to}`;
    let body: { prices?: [number, number][] };
    try {
      const res = await fetch(url, { headers: this.apiKey ? { 'x-cg-pro-api-key': this.apiKey } : {}, signal: AbortSignal.timeout(this.timeoutMs) });
      if (!res.ok) throw new PriceUnavailableError(`price API answered ${res.status}`);
      body = (await res.json()) as typeof body;
    } catch (err) {
      if (err instanceof PriceUnavailableError) throw err;
      throw new PriceUnavailableError(`price API unreachable: ${(err as Error).message}`);
    }
    const prices = Array.isArray(body.prices) ? body.prices : [];
    let best: [number, number] | null = null;
    for (const p of prices) {
      if (!Array.isArray(p) || typeof p[0] !== 'number' || typeof p[1] !== 'number') continue;
      if (!best || Math.abs(p[0] - at.getTime()) < Math.abs(best[0] - at.getTime())) best = p;
    }
    if (!best) throw new PriceUnavailableError(`no ${currency} price near ${at.toISOString()}`);
    // The API answers JSON numbers; keep up to 8 decimals as a plain decimal string.
    return best[1].toFixed(8).replace(/\.?0+$/, '') || '0';
  }
}

/** The oracle PRICE_ORACLE (and COINGECKO_URL, COINGECKO_API_KEY) select, without the cache. */
export function priceOracleFromConfig(cfg: Config['priceOracle']): PriceOracle {
  switch (cfg.provider) {
    case 'fixed':
      return new FixedRateOracle();
    case 'coingecko':
      return new CoinGeckoOracle(cfg.coingeckoUrl, cfg.coingeckoApiKey ?? undefined);
  }
}
