/**
 * USD prices of BTC and ETH at a moment, behind one interface. The fixed-rate table is the
 * embedded default; `PRICE_ORACLE=coingecko` selects the HTTP provider (`priceOracleFromConfig`).
 * Start-up puts the configured one, cached per (currency, minute), in the process's
 * dependencies (src/dependencies.ts); tests pass their own.
 */
import type { CryptoCurrency } from '../cryptocurrency/addresses';
import type { Config } from '../config';

export interface PriceOracle {
  /** USD per coin at `at`, as a decimal string. Throws PriceUnavailableError when it cannot say. */
  usdPrice(currency: CryptoCurrency, at: Date): Promise<string>;
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
}

/** Wraps an oracle with a cache keyed by (currency, UTC minute of `at`). */
export class CachedOracle implements PriceOracle {
  private cache = new Map<string, string>();
  constructor(private readonly inner: PriceOracle, private readonly maxEntries = 10_000) {}
  async usdPrice(currency: CryptoCurrency, at: Date): Promise<string> {
    const key = `${currency}:${Math.floor(at.getTime() / 60_000)}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const price = await this.inner.usdPrice(currency, at);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(key, price);
    return price;
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
