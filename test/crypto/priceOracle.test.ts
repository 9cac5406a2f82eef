import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Client } from '@temporalio/client';
import {
  CachedOracle,
  CoinGeckoOracle,
  FixedRateOracle,
  PriceUnavailableError,
  priceOracleFromConfig,
} from '../../src/services/crypto/priceOracle';
import { ConfigError, loadConfig } from '../../src/config';
import { createDependencies } from '../../src/dependencies';
import { SpotPrices } from '../../src/services/crypto/spotPrices';
import { PRICE_FAILURE_BACKOFF_MS, SPOT_MAX_AGE_MS, SPOT_REFRESH_MS } from '../../src/cryptocurrency/priceFreshness';
import type { PriceOracle } from '../../src/services/crypto/priceOracle';
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi } from '../support/api';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from './helpers';

useTestDatabase();

/** A local server answering like CoinGecko's /coins/{id}/market_chart/range (after `delayMs`, like a distant one). */
function startFakeCoinGecko(delayMs = 0) {
  const requests: { path: string; query: URLSearchParams; key?: string }[] = [];
  let fail = false;
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    requests.push({ path: url.pathname, query: url.searchParams, key: req.headers['x-cg-pro-api-key'] as string | undefined });
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (fail) {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: { error_code: 429, error_message: "You've exceeded the Rate Limit." } }));
      return;
    }
    const from = Number(url.searchParams.get('from')) * 1000;
    const to = Number(url.searchParams.get('to')) * 1000;
    const base = url.pathname.includes('bitcoin') ? 42000 : 2200;
    const prices: [number, number][] = [];
    // Five-minute samples, like the API's granularity for ranges of a day or less.
    for (let t = Math.ceil(from / 300_000) * 300_000; t <= to; t += 300_000) prices.push([t, base + (t / 300_000) % 100 + 0.123456789]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ prices, market_caps: prices.map(([t, p]) => [t, p * 19e6]), total_volumes: prices.map(([t]) => [t, 1.5e10]) }));
  });
  return new Promise<{ url: string; requests: typeof requests; setFail: (f: boolean) => void; close: () => Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/api/v3`, requests, setFail: (f) => (fail = f), close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

describe('price oracles', () => {
  it('fixed rates: the embedded default table', async () => {
    const o = new FixedRateOracle();
    expect(await o.usdPrice('BTC')).toBe('50000.00');
    expect(await o.usdPrice('ETH')).toBe('3000.00');
    expect(await new FixedRateOracle({ BTC: '1', ETH: '2' }).usdPrice('ETH')).toBe('2');
  });

  it('a price at hand: a fixed rate, or a cached minute; never a call upstream', async () => {
    const at = new Date('2026-05-01T12:07:00.000Z');
    expect(new FixedRateOracle().knownPrice('BTC')).toBe('50000.00');
    expect(new FixedRateOracle({ BTC: '1' } as never).knownPrice('ETH')).toBeNull();
    expect(new CachedOracle(new FixedRateOracle()).knownPrice('ETH', at)).toBe('3000.00');
    const fake = await startFakeCoinGecko();
    try {
      const oracle = new CachedOracle(new CoinGeckoOracle(fake.url));
      expect(oracle.knownPrice('BTC', at)).toBeNull();
      expect(fake.requests).toHaveLength(0);
      const price = await oracle.usdPrice('BTC', at);
      // The minute just looked up, and only that minute and currency.
      expect(oracle.knownPrice('BTC', new Date('2026-05-01T12:07:59.000Z'))).toBe(price);
      expect(oracle.knownPrice('BTC', new Date('2026-05-01T12:08:00.000Z'))).toBeNull();
      expect(oracle.knownPrice('ETH', at)).toBeNull();
      expect(fake.requests).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it('CoinGecko: asks the range around the moment, takes the closest sample, sends the key, caches per minute', async () => {
    const fake = await startFakeCoinGecko();
    try {
      const oracle = new CachedOracle(new CoinGeckoOracle(fake.url, 'demo-key'));
      const at = new Date('2026-05-01T12:07:00.000Z');
      const price = await oracle.usdPrice('BTC', at);
      // Closest five-minute sample to 12:07 is 12:05.
      const t = Date.parse('2026-05-01T12:05:00.000Z');
      expect(price).toBe((42000 + (t / 300_000) % 100 + 0.123456789).toFixed(8).replace(/\.?0+$/, ''));
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0].path).toBe('/api/v3/coins/bitcoin/market_chart/range');
      expect(fake.requests[0].query.get('vs_currency')).toBe('usd');
      expect(Number(fake.requests[0].query.get('from'))).toBeLessThan(at.getTime() / 1000);
      expect(Number(fake.requests[0].query.get('to'))).toBeGreaterThan(at.getTime() / 1000);
      expect(fake.requests[0].key).toBe('demo-key');
      // Same minute: cached. Another minute or currency: asked again.
      expect(await oracle.usdPrice('BTC', new Date('2026-05-01T12:07:45.000Z'))).toBe(price);
      expect(fake.requests).toHaveLength(1);
      await oracle.usdPrice('ETH', at);
      expect(fake.requests[1].path).toBe('/api/v3/coins/ethereum/market_chart/range');
      fake.setFail(true);
      await expect(oracle.usdPrice('BTC', new Date('2026-05-01T13:00:00.000Z'))).rejects.toBeInstanceOf(PriceUnavailableError);
    } finally {
      await fake.close();
    }
  });

  it('CoinGecko unreachable: PriceUnavailableError', async () => {
    const o = new CoinGeckoOracle('http://127.0.0.1:9/api/v3', undefined, 60, 2000);
    await expect(o.usdPrice('ETH', new Date())).rejects.toBeInstanceOf(PriceUnavailableError);
  });
});

describe('price oracle from configuration', () => {
  it('PRICE_ORACLE selects the provider; a bad value is a ConfigError', async () => {
    expect(loadConfig({}).priceOracle).toEqual({ provider: 'fixed', coingeckoUrl: 'https://api.coingecko.com/api/v3', coingeckoApiKey: null });
    expect(priceOracleFromConfig(loadConfig({}).priceOracle)).toBeInstanceOf(FixedRateOracle);
    expect(priceOracleFromConfig(loadConfig({ PRICE_ORACLE: 'coingecko' }).priceOracle)).toBeInstanceOf(CoinGeckoOracle);
    expect(() => loadConfig({ PRICE_ORACLE: 'chainlink' })).toThrow(ConfigError);
    expect(() => loadConfig({ PRICE_ORACLE: 'chainlink' })).toThrow('PRICE_ORACLE must be one of fixed, coingecko, got "chainlink"');
    await expect(startTestApi({}, { PRICE_ORACLE: 'CoinGecko' })).rejects.toBeInstanceOf(ConfigError);
    expect(() => loadConfig({ PRICE_ORACLE: 'coingecko', COINGECKO_URL: 'not a url' })).toThrow(ConfigError);
  });

  it('PRICE_ORACLE=coingecko: a manual transaction through the API is priced by the CoinGecko server', async () => {
    const fake = await startFakeCoinGecko();
    const api = await startTestApi({}, { PRICE_ORACLE: 'coingecko', COINGECKO_URL: fake.url, COINGECKO_API_KEY: 'cg-key' });
    try {
      const a = await newAccount(api.url);
      const { customer, wallet } = await customerWithWallet(a.api);
      const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
      // 12:05 is a sample: 42000 + (t / 300000) % 100 + 0.123456789 = 42057.12345679 USD (fixed table: 50000).
      const at = '2026-05-01T12:05:00.000Z';
      const res = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.01', currency_code: 'BTC', transaction_id: txHash(), timestamp: at });
      expect(res.status).toBe(201);
      // No Temporal client in this app: allocation ran inline.
      const tx = (await a.api.get(`/v1/crypto_transactions/${res.body.id}`)).body;
      expect(tx).toMatchObject({ usd_value: '420.57', unallocated_amount: '320.57' });
      expect(tx.allocations).toEqual([expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })]);
      const asked = fake.requests.filter((r) => r.path === '/api/v3/coins/bitcoin/market_chart/range');
      expect(asked.length).toBeGreaterThanOrEqual(1);
      expect(asked[0].key).toBe('cg-key');
      expect(Number(asked[0].query.get('from'))).toBeLessThan(Date.parse(at) / 1000);
      expect(Number(asked[0].query.get('to'))).toBeGreaterThan(Date.parse(at) / 1000);
    } finally {
      await api.close();
      await fake.close();
    }
  });

  it('start-up builds the configured oracle into the dependencies, cached per minute (API and worker alike)', async () => {
    const temporal = { client: {} as Client, taskQueue: 'unused' };
    const logger = pino({ level: 'silent' });
    const fixed = createDependencies({ config: loadConfig({ LOG_LEVEL: 'silent' }), logger, temporal }).priceOracle;
    expect(fixed).toBeInstanceOf(CachedOracle);
    expect(await fixed.usdPrice('BTC', new Date())).toBe('50000.00');
    const coingecko = createDependencies({ config: loadConfig({ LOG_LEVEL: 'silent', PRICE_ORACLE: 'coingecko', COINGECKO_URL: 'http://127.0.0.1:9/api/v3' }), logger, temporal }).priceOracle;
    expect(coingecko).toBeInstanceOf(CachedOracle);
    await expect(coingecko.usdPrice('BTC', new Date())).rejects.toBeInstanceOf(PriceUnavailableError);
    // The pay page's refresher sits on the same cached oracle: no price, no estimate.
    const spot = createDependencies({ config: loadConfig({ LOG_LEVEL: 'silent', PRICE_ORACLE: 'coingecko', COINGECKO_URL: 'http://127.0.0.1:9/api/v3' }), logger, temporal }).spotPrices;
    expect(spot).toBeInstanceOf(SpotPrices);
    expect(await spot.usdPrice('BTC')).toBeNull();
  });
});

/** A clock a test moves by hand. */
function manualClock(start = Date.parse('2026-05-01T12:00:00.000Z')) {
  const clock = { t: start, now: () => clock.t, advance: (ms: number) => void (clock.t += ms) };
  return clock;
}

describe('price lookups: shared in flight, failures backed off (issue 23)', () => {
  it('50 concurrent lookups of one (currency, minute) make one upstream call', async () => {
    const fake = await startFakeCoinGecko();
    try {
      const oracle = new CachedOracle(new CoinGeckoOracle(fake.url));
      const at = new Date('2026-05-01T12:07:00.000Z');
      const prices = await Promise.all(Array.from({ length: 50 }, () => oracle.usdPrice('BTC', at)));
      expect(new Set(prices).size).toBe(1);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it('20 lookups during an upstream failure make one call within the backoff; after it, one more (injected clock)', async () => {
    const fake = await startFakeCoinGecko();
    try {
      const clock = manualClock();
      const oracle = new CachedOracle(new CoinGeckoOracle(fake.url), { now: clock.now });
      // An allocation's price: the transaction's own (past) timestamp.
      const at = new Date('2026-04-30T08:05:00.000Z');
      fake.setFail(true);
      const concurrent = await Promise.allSettled(Array.from({ length: 10 }, () => oracle.usdPrice('BTC', at)));
      for (let i = 0; i < 10; i += 1) {
        await expect(oracle.usdPrice('BTC', at)).rejects.toBeInstanceOf(PriceUnavailableError);
        clock.advance(400);
      }
      expect(concurrent.every((r) => r.status === 'rejected' && r.reason instanceof PriceUnavailableError)).toBe(true);
      expect(fake.requests).toHaveLength(1);

      // Past the backoff it asks again; still failing, the next wait is twice as long.
      clock.advance(PRICE_FAILURE_BACKOFF_MS);
      await expect(oracle.usdPrice('BTC', at)).rejects.toThrow('price API answered 429');
      expect(fake.requests).toHaveLength(2);
      clock.advance(PRICE_FAILURE_BACKOFF_MS);
      await expect(oracle.usdPrice('BTC', at)).rejects.toThrow(/asked again in \d+ s/);
      expect(fake.requests).toHaveLength(2);

      // The API is back: the retried allocation gets the historical sample once the backoff is over.
      fake.setFail(false);
      clock.advance(PRICE_FAILURE_BACKOFF_MS);
      const t = Date.parse('2026-04-30T08:05:00.000Z');
      expect(await oracle.usdPrice('BTC', at)).toBe((42000 + (t / 300_000) % 100 + 0.123456789).toFixed(8).replace(/\.?0+$/, ''));
      expect(fake.requests).toHaveLength(3);
      // Another key was never held back by this one's failures.
      await oracle.usdPrice('ETH', at);
      expect(fake.requests).toHaveLength(4);
    } finally {
      await fake.close();
    }
  });

  it('spot prices: visitors read the refresher\'s price; it asks once per refresh interval, and keeps the last price through a failure', async () => {
    const clock = manualClock();
    let calls = 0;
    let down = false;
    const upstream: PriceOracle = {
      usdPrice: async () => {
        calls += 1;
        await new Promise((r) => setTimeout(r, 5));
        if (down) throw new PriceUnavailableError('down');
        return `${50000 + calls}.00`;
      },
    };
    const spot = new SpotPrices(upstream, { now: clock.now });
    expect(new Set(await Promise.all(Array.from({ length: 50 }, () => spot.usdPrice('BTC'))))).toEqual(new Set(['50001.00']));
    expect(calls).toBe(1);
    clock.advance(SPOT_REFRESH_MS - 1);
    await Promise.all(Array.from({ length: 20 }, () => spot.usdPrice('BTC')));
    expect(calls).toBe(1);
    clock.advance(1);
    expect(await Promise.all(Array.from({ length: 20 }, () => spot.usdPrice('BTC')))).toEqual(Array(20).fill('50002.00'));
    expect(calls).toBe(2);

    // Down: one try per interval, the last price meanwhile, none once it is too old.
    down = true;
    clock.advance(SPOT_REFRESH_MS);
    expect(await Promise.all(Array.from({ length: 20 }, () => spot.usdPrice('BTC')))).toEqual(Array(20).fill('50002.00'));
    expect(calls).toBe(3);
    clock.advance(SPOT_MAX_AGE_MS);
    expect(await spot.usdPrice('BTC')).toBeNull();
    expect(calls).toBe(4);
    down = false;
    clock.advance(SPOT_REFRESH_MS);
    expect(await spot.usdPrice('BTC')).toBe('50005.00');
  });

  it('the public link and the pay page, polled by many visitors: the refresher\'s calls, not one per visitor', async () => {
    // Slow enough that concurrent visitors overlap on it.
    const fake = await startFakeCoinGecko(300);
    const clock = manualClock(Date.now());
    const priceOracle = new CachedOracle(new CoinGeckoOracle(fake.url));
    const api = await startTestApi({ priceOracle, spotPrices: new SpotPrices(priceOracle, { now: clock.now }) }, { PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' });
    try {
      const a = await newAccount(api.url);
      const { customer, wallet } = await customerWithWallet(a.api);
      await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
      await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
      const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id })).body;
      const secret = link.link.split('/pay/')[1];
      const visitor = client(api.url);
      const visit = async () => {
        const [json, page] = await Promise.all([visitor.get(`/v1/public/payment_claim_links/${secret}`), visitor.get(`/pay/${secret}`)]);
        expect(json.status).toBe(200);
        expect(page.status).toBe(200);
        return json.body.quotes as { currency: string; usd_price: string }[];
      };
      const upstreamCalls = () => fake.requests.filter((r) => r.path.endsWith('/market_chart/range')).length;
      const first = await Promise.all(Array.from({ length: 30 }, visit));
      expect(first.every((q) => q.length === 1 && q[0].usd_price === first[0][0].usd_price)).toBe(true);
      for (let i = 0; i < 10; i += 1) await visit();
      expect(upstreamCalls()).toBe(1);
      // The next refresh: one more call, whatever the visitors.
      clock.advance(SPOT_REFRESH_MS);
      await Promise.all(Array.from({ length: 30 }, visit));
      expect(upstreamCalls()).toBe(2);
    } finally {
      await api.close();
      await fake.close();
    }
  });
});
