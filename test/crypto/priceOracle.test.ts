import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CachedOracle, CoinGeckoOracle, FixedRateOracle, PriceUnavailableError } from '../../src/services/priceOracle';

/** A local server answering like CoinGecko's /coins/{id}/market_chart/range. */
function startFakeCoinGecko() {
  const requests: { path: string; query: URLSearchParams; key?: string }[] = [];
  let fail = false;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    requests.push({ path: url.pathname, query: url.searchParams, key: req.headers['x-cg-pro-api-key'] as string | undefined });
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
