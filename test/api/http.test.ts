import http from 'node:http';
import pino from 'pino';
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { Customer } from '../../src/models/customer';
import { loadConfig } from '../../src/config';
import { READY_CACHE_MS } from '../../src/api/health/routes';
import { httpServer } from '../../src/api/httpServer';
import { reuseAfter, reuseAfterIdle } from '../support/keepAlive';

/** A logger whose lines the test can read. */
function capturingLogger() {
  const lines: any[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('HTTP surface', () => {
  it('serves the same routes under /api/v1', async () => {
    const a = await newAccount(api.url);
    const c = (await a.api.post('/api/v1/customers', { email: 'alias@x.io' })).body;
    expect((await a.api.get(`/v1/customers/${c.id}`)).status).toBe(200);
    expect((await a.api.get(`/api/v1/customers/${c.id}`)).body.email).toBe('alias@x.io');
  });

  it('answers malformed JSON with 400 and oversize bodies with 413, writing nothing', async () => {
    const a = await newAccount(api.url);
    const bad = await a.api.request('POST', '/v1/customers', '{"email": "x@y.io",');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: null });
    const big = await a.api.request('POST', '/v1/customers', JSON.stringify({ email: 'big@x.io', first_name: 'x'.repeat(1024 * 1024 + 10) }));
    expect(big.status).toBe(413);
    expect(big.body.error.type).toBe('invalid_request_error');
    const notObject = await a.api.request('POST', '/v1/customers', '[1,2]');
    expect(notObject.status).toBe(422);
    expect(await Customer.countDocuments({ account_id: a.account_id })).toBe(0);
  });

  it('refuses a JSON body that is not an object (null included) on every route with a body, changing nothing', async () => {
    const a = await newAccount(api.url);
    const customer = (await a.api.post('/v1/customers', { email: 'nb@x.io' })).body;
    const product = (await a.api.post('/v1/products', { name: 'Kept' })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 100 })).body;
    const invoice = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-31' })).body;
    for (const path of [`/v1/invoices/${invoice.id}`, `/v1/prices/${price.id}`, `/v1/products/${product.id}`, `/v1/customers/${customer.id}`]) {
      for (const body of ['null', '7', '"x"', '[]']) {
        const r = await a.api.request('PATCH', path, body);
        expect([path, body, r.status]).toEqual([path, body, 422]);
        expect(r.body.error).toMatchObject({ code: 'parameter_invalid', message: 'Request body must be a JSON object', param: null });
      }
    }
    expect((await a.api.request('POST', '/v1/customers', 'null')).status).toBe(422);
    expect((await client(api.url).request('POST', '/v1/auth', 'null')).status).toBe(422);
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.updated_at).toBe(invoice.updated_at);
    expect((await a.api.get(`/v1/prices/${price.id}`)).body.updated_at).toBe(price.updated_at);
    expect((await a.api.get(`/v1/products/${product.id}`)).body.updated_at).toBe(product.updated_at);
    // No body at all is still an empty object (routes whose fields are all optional).
    expect((await a.api.request('PATCH', `/v1/products/${product.id}`)).status).toBe(200);
  });

  it('caps page at 1,000,000: above it, and 1e400 (Infinity), 422 on every list', async () => {
    const a = await newAccount(api.url);
    for (const list of ['customers', 'invoices', 'crypto_payment_claims', 'accounts', 'webhook_endpoints']) {
      const ok = await a.api.get(`/v1/${list}?page=1000000`);
      expect([list, ok.status]).toEqual([list, 200]);
      for (const page of ['1000001', '1e400', '9007199254740993']) {
        const r = await a.api.get(`/v1/${list}?page=${page}`);
        expect([list, page, r.status]).toEqual([list, page, 422]);
        expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'page' });
      }
    }
  });

  it('answers unknown routes with a structured 404', async () => {
    const a = await newAccount(api.url);
    const r = await a.api.get('/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('resource_not_found');
    expect((await client(api.url).get('/elsewhere')).status).toBe(404);
    expect((await a.api.get(`/v1/customers/${'x'.repeat(5000)}`)).status).toBe(404);
  });

  it('has health and readiness endpoints', async () => {
    const anon = client(api.url);
    expect((await anon.get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await anon.get('/readyz')).status).toBe(200);
  });

  it('/readyz answers only ok or unavailable, never the failure itself, which goes to the log', async () => {
    const { logger, lines } = capturingLogger();
    const secret = 'getaddrinfo ENOTFOUND db.internal.example:27017 user=admin';
    const down = await startTestApi({
      logger,
      probes: [
        { name: 'database', check: async () => { throw new Error(secret); } },
        { name: 'temporal', check: async () => undefined },
      ],
    });
    const up = await startTestApi({ probes: [{ name: 'database', check: async () => undefined }] });
    try {
      const r = await client(down.url).get('/readyz');
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ status: 'unavailable' });
      expect(lines.some((l) => l.probe === 'database' && l.err?.message === secret)).toBe(true);
      const ok = await client(up.url).get('/readyz');
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ status: 'ok' });
    } finally {
      await down.close();
      await up.close();
    }
  });

  it('/readyz probes at most once per READY_CACHE_MS, however many requests ask', async () => {
    let probed = 0;
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const counted = await startTestApi({ probes: [{ name: 'database', check: async () => { probed += 1; await slow; } }] });
    try {
      const anon = client(counted.url);
      // Asked while the first probe is still running, and again just after: one probe for all.
      const first = Promise.all(Array.from({ length: 5 }, () => anon.get('/readyz')));
      await new Promise((r) => setTimeout(r, 50));
      release();
      expect((await first).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      for (let i = 0; i < 5; i++) expect((await anon.get('/readyz')).status).toBe(200);
      expect(probed).toBe(1);
      await new Promise((r) => setTimeout(r, READY_CACHE_MS + 100));
      expect((await anon.get('/readyz')).status).toBe(200);
      expect(probed).toBe(2);
    } finally {
      await counted.close();
    }
  });

  it('never logs a payment claim link secret', async () => {
    const { logger, lines } = capturingLogger();
    const logged = await startTestApi({ logger });
    const secret = 'S3cretLinkValue_abcdefghijklmnopqrstuvwxyz0';
    try {
      const anon = client(logged.url);
      await anon.get(`/pay/${secret}`);
      await anon.get(`/PAY/${secret}`);
      await anon.get(`/v1/public/payment_claim_links/${secret}`);
      await anon.get(`/api/v1/public/payment_claim_links/${secret}`);
      await anon.post(`/v1/public/payment_claim_links/${secret}/claims`, {});
      const requests = lines.filter((l) => l.msg === 'request');
      expect(requests.map((l) => l.path)).toEqual([
        '/pay/[redacted]',
        '/PAY/[redacted]',
        '/v1/public/payment_claim_links/[redacted]',
        '/api/v1/public/payment_claim_links/[redacted]',
        '/v1/public/payment_claim_links/[redacted]/claims',
      ]);
      expect(JSON.stringify(lines)).not.toContain(secret);
    } finally {
      await logged.close();
    }
  });

  it('sets a request id', async () => {
    const a = await newAccount(api.url);
    const r = await a.api.get('/v1/customers', { 'X-Request-Id': 'req-123' });
    expect(r.headers.get('x-request-id')).toBe('req-123');
    expect((await a.api.get('/v1/customers')).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('keep-alive connections', () => {
  it('closes the connection after refusing a body it did not read (413), and a new one is served', async () => {
    const a = await newAccount(api.url);
    // 2 MiB announced, 64 KiB sent: refused on its length, the rest never read.
    const head = `POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1024 * 1024}\r\nConnection: keep-alive\r\n\r\n`;
    const r = await reuseAfter(api.url, head + '{"email":"' + 'x'.repeat(64 * 1024));
    expect(r.answers).toMatch(/^HTTP\/1.1 413 /);
    expect(r.answers).toMatch(/\r\nconnection: close\r\n/i);
    expect(r.closedByServer).toBe(true);
    expect(r.ms).toBeLessThan(2_000);
    // The console's form, refused halfway through reading it.
    const form = `POST /console/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${64 * 1024}\r\nConnection: keep-alive\r\n\r\n`;
    const f = await reuseAfter(api.url, form + 'email=' + 'x'.repeat(16 * 1024));
    expect(f.answers).toMatch(/^HTTP\/1.1 413 /);
    expect(f.answers).toMatch(/\r\nconnection: close\r\n/i);
    expect(f.closedByServer).toBe(true);
    // A client that reuses its connections (fetch) gets its next answer on a new one, at once.
    const big = await a.api.request('POST', '/v1/customers', JSON.stringify({ email: 'big@x.io', first_name: 'x'.repeat(1024 * 1024 + 10) }));
    expect(big.status).toBe(413);
    const started = Date.now();
    expect((await a.api.post('/v1/customers', { email: 'after-413@x.io' })).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('keeps a connection whose body it read open for the next request', async () => {
    const a = await newAccount(api.url);
    const body = '{"email":"kept@x.io"}';
    const r = await reuseAfter(api.url, `POST /v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`, 1_500);
    expect(r.answers).toMatch(/^HTTP\/1.1 201 /);
    expect(r.closedByServer).toBe(false);
    expect(r.answers).toMatch(/HTTP\/1.1 200 OK[^]*"status"/);
  });

  it('keeps idle connections past a load balancer\'s idle timeout (HTTP_KEEP_ALIVE_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS)', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ httpKeepAliveTimeoutMs: 65_000, httpHeadersTimeoutMs: 66_000 });
    const server = httpServer({ callback: () => async () => undefined }, config);
    expect([server.keepAliveTimeout, server.headersTimeout]).toEqual([65_000, 66_000]);
    expect(loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '120000', HTTP_HEADERS_TIMEOUT_MS: '121000' })).toMatchObject({ httpKeepAliveTimeoutMs: 120_000, httpHeadersTimeoutMs: 121_000 });
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '70000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS \(66000\) must exceed HTTP_KEEP_ALIVE_TIMEOUT_MS \(70000\)/);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '10' })).toThrow(/HTTP_KEEP_ALIVE_TIMEOUT_MS must be between/);
  });

  it('answers on an idle keep-alive connection after Node\'s old 5 s keep-alive timeout', async () => {
    const r = await reuseAfterIdle(api.url, 6_000);
    expect(r.closed).toBe(false);
    expect(r.second).toMatch(/^HTTP\/1.1 200 /);
  }, 15_000);
});

describe('rate limit', () => {
  let limited: TestApi;
  beforeAll(async () => {
    limited = await startTestApi({}, { RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(() => limited.close());

  it('answers 429 with Retry-After past the per-account limit, one window for all its tokens and both mounts', async () => {
    const a = await newAccount(limited.url);
    const b = await newAccount(limited.url);
    // A second token of the same account, minted by POST /v1/auth: no fresh window.
    const minted = await client(limited.url).post('/v1/auth', { email: a.email, password: a.password });
    expect(minted.status).toBe(200);
    const second = client(limited.url, minted.body.token);
    // Each key's window starts at its first request, so three requests fit whatever the clock says.
    expect((await a.api.get('/v1/customers')).status).toBe(200);
    expect((await client(limited.url, a.token).get('/api/v1/customers')).status).toBe(200);
    const third = await second.get('/v1/customers');
    expect(third.status).toBe(200);
    expect(third.headers.get('ratelimit-remaining')).toBe('0');
    const r = await second.get('/api/v1/customers');
    expect(r.status).toBe(429);
    expect(r.body.error).toMatchObject({ code: 'rate_limit_error', message: 'Too many requests, retry after 60 seconds' });
    expect(r.headers.get('retry-after')).toBe('60');
    expect(r.headers.get('ratelimit-limit')).toBe('3');
    expect((await a.api.get('/v1/customers')).status).toBe(429);
    // Another scope of the account, and another account, count apart.
    expect((await a.sandbox.get('/v1/customers')).status).toBe(200);
    expect((await b.api.get('/v1/customers')).status).toBe(200);
  });
});

describe('client address for the per-IP limiters (the pay page\'s)', () => {
  const PUBLIC_CLAIM_RATE_PER_MINUTE = loadConfig({}).publicRateLimitPerMinute;
  const PAY = `/pay/${'z'.repeat(43)}`;
  /** Statuses of one request past the per-IP limit, within one rate window (it starts at a key's first request). */
  async function burst(url: string, xff: (i: number) => string) {
    const statuses: number[] = [];
    for (let i = 0; i <= PUBLIC_CLAIM_RATE_PER_MINUTE; i++) statuses.push((await client(url).get(PAY, { 'X-Forwarded-For': xff(i) })).status);
    return statuses;
  }
  const limitedLast = [...Array(PUBLIC_CLAIM_RATE_PER_MINUTE).fill(404), 429];

  it('ignores X-Forwarded-For by default, so a client cannot pick a fresh address per request', async () => {
    const direct = await startTestApi();
    try {
      expect(await burst(direct.url, (i) => `198.51.100.${i}`)).toEqual(limitedLast);
    } finally {
      await direct.close();
    }
  });

  it('with TRUST_PROXY=true (loopback) counts the last X-Forwarded-For entry, the one the proxy appended', async () => {
    const proxied = await startTestApi({}, { TRUST_PROXY: 'true' });
    try {
      // The client wrote the first entries; the proxy appended 203.0.113.7.
      expect(await burst(proxied.url, (i) => `10.0.0.${i}, 192.0.2.${i}, 203.0.113.7`)).toEqual(limitedLast);
      expect((await client(proxied.url).get(PAY, { 'X-Forwarded-For': '203.0.113.7, 203.0.113.8' })).status).toBe(404);
      expect((await client(proxied.url).get(PAY, { 'X-Forwarded-For': '203.0.113.8, 203.0.113.7' })).status).toBe(429);
    } finally {
      await proxied.close();
    }
  });

  it('with a TRUST_PROXY list skips every listed proxy, and believes the header from those peers only', async () => {
    const behindTwo = await startTestApi({}, { TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' });
    const notOurs = await startTestApi({}, { TRUST_PROXY: '10.0.0.1' });
    try {
      // Client 203.0.113.7, then a load balancer at 10.1.2.3, then the loopback peer.
      expect(await burst(behindTwo.url, (i) => `192.0.2.${i}, 203.0.113.7, 10.1.2.3`)).toEqual(limitedLast);
      expect((await client(behindTwo.url).get(PAY, { 'X-Forwarded-For': '203.0.113.8, 10.1.2.3' })).status).toBe(404);
      // The loopback peer is not a listed proxy there: its header is ignored.
      expect(await burst(notOurs.url, (i) => `198.51.100.${i}`)).toEqual(limitedLast);
    } finally {
      await behindTwo.close();
      await notOurs.close();
    }
  });
});

describe('idempotency keys', () => {
  it('replays the first response and changes nothing', async () => {
    const a = await newAccount(api.url);
    const first = await a.api.post('/v1/customers', { email: 'idem@x.io' }, { 'Idempotency-Key': 'k-1' });
    const again = await a.api.post('/v1/customers', { email: 'idem@x.io' }, { 'Idempotency-Key': 'k-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(await Customer.countDocuments({ account_id: a.account_id })).toBe(1);
  });

  it('refuses the same key with another body, keeps 4xx, and is per account', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    await a.api.post('/v1/customers', { email: 'one@x.io' }, { 'Idempotency-Key': 'k-2' });
    const other = await a.api.post('/v1/customers', { email: 'two@x.io' }, { 'Idempotency-Key': 'k-2' });
    expect(other.status).toBe(422);
    expect(other.body.error.param).toBe('Idempotency-Key');
    expect((await b.api.post('/v1/customers', { email: 'two@x.io' }, { 'Idempotency-Key': 'k-2' })).status).toBe(201);

    const bad1 = await a.api.post('/v1/customers', { email: 'bad' }, { 'Idempotency-Key': 'k-3' });
    const bad2 = await a.api.post('/v1/customers', { email: 'bad' }, { 'Idempotency-Key': 'k-3' });
    expect(bad1.status).toBe(422);
    expect(bad2.status).toBe(422);
    expect(bad2.headers.get('idempotent-replayed')).toBe('true');
    expect((await a.api.post('/v1/customers', { email: 'x@x.io' }, { 'Idempotency-Key': 'bad key with spaces' })).status).toBe(422);
  });

  it('refuses a key that is blank or has characters outside printable ASCII, creating nothing', async () => {
    const a = await newAccount(api.url);
    // node:http sends header bytes as given (latin1), as a fuzzer does; fetch would refuse or trim them.
    const post = (key: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ email: 'k@x.io' });
        const req = http.request(`${api.url}/v1/customers`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${a.token}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
        });
        req.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode!)));
        req.on('error', reject);
        req.end(body);
      });
    for (const key of ['', ' ', ' \t ', 'caf\u00e9', 'k\u00a0y', 'a b', 'x'.repeat(256)]) {
      expect([key, await post(key)]).toEqual([key, 422]);
    }
    expect(await Customer.countDocuments({ account_id: a.account_id })).toBe(0);
    expect(await post('~!ok-Key_1')).toBe(201);
  });

  it('answers 409 while the first request with a key is in flight', async () => {
    const a = await newAccount(api.url);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => a.api.post('/v1/customers', { email: 'race@x.io' }, { 'Idempotency-Key': 'k-race' })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('idempotency_conflict');
    expect(await Customer.countDocuments({ account_id: a.account_id })).toBe(1);
  });
});
