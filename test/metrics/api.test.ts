/**
 * GET /metrics of the real API app: requests counted and timed by route template (never the
 * raw path) and status, the in-flight gauge, and rejections by each rate limiter.
 */
import pino from 'pino';
import { Registry } from 'prom-client';
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { createApiMetrics } from '../../src/metrics/api';
import { AUTH_LIMITS, AuthThrottle } from '../../src/api/auth/throttle';
import { samplesOf, scrape, valueOf } from './prom';

useTestDatabase();

const SECRET = 'pcl-secret-Zx81QmW3vT0aa';
const METRICS_TOKEN = 'metrics-token-for-the-api-test-0123456789';
const logLines: { msg: string; path?: string }[] = [];
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi(
    {
      metrics: createApiMetrics(new Registry()),
      logger: pino({ level: 'info' }, { write: (s: string) => logLines.push(JSON.parse(s)) }),
      // No sign-in attempt is admitted: the first is refused by the throttle, without a password check.
      authThrottle: new AuthThrottle({ ...AUTH_LIMITS, attemptsPerMinute: 0 }),
    },
    { RATE_LIMIT_PER_MINUTE: '3', PUBLIC_RATE_LIMIT_PER_MINUTE: '1', METRICS_TOKEN },
  );
});
afterAll(() => api?.close());

describe('GET /metrics on the API', () => {
  it('counts requests by route template and status, and rejections by limiter', async () => {
    /** What this test sent and got, as the labels it expects: "METHOD route status" -> count. */
    const sent = new Map<string, number>();
    const note = (method: string, route: string, status: number) => {
      const key = `${method} ${route} ${status}`;
      sent.set(key, (sent.get(key) ?? 0) + 1);
    };
    const a = await newAccount(api.url);

    const missing = await a.api.get('/v1/customers/cust_doesnotexist000000000000');
    expect(missing.status).toBe(404);
    note('GET', '/v1/customers/:id', 404);
    // Three a minute per account: the fourth request in this minute is refused (a minute boundary
    // in between only delays it).
    let perToken429 = 0;
    for (let i = 0; i < 10 && perToken429 === 0; i++) {
      const res = await a.api.get('/v1/customers');
      expect([200, 429]).toContain(res.status);
      note('GET', '/v1/customers', res.status);
      if (res.status === 429) perToken429 += 1;
    }
    expect(perToken429).toBe(1);
    expect(sent.get('GET /v1/customers 200')).toBeGreaterThanOrEqual(2);

    // Refused by auth before the route ran: still its template, not the router's prefix pattern.
    const anonymous = await fetch(`${api.url}/v1/customers`);
    expect(anonymous.status).toBe(401);
    note('GET', '/v1/customers', 401);

    // One a minute per IP on the pay page: the secret in the path never becomes a label.
    const payStatuses: number[] = [];
    for (let i = 0; i < 2; i++) payStatuses.push((await fetch(`${api.url}/pay/${SECRET}`)).status);
    expect(payStatuses[1]).toBe(429);
    for (const s of payStatuses) note('GET', '/pay/:secret', s);

    const signIn = await fetch(`${api.url}/v1/auth`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: a.email, password: a.password }),
    });
    expect(signIn.status).toBe(429);
    note('POST', '/v1/auth', 429);

    expect((await fetch(`${api.url}/no/such/${SECRET}`)).status).toBe(404);
    note('GET', 'unmatched', 404);
    expect((await fetch(`${api.url}/healthz`, { method: 'DELETE' })).status).toBe(405);
    note('DELETE', 'unmatched', 405);

    const first = await scrape(`${api.url}/metrics`, METRICS_TOKEN);
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = first.samples;

    for (const [key, count] of sent) {
      const [method, route, status] = key.split(' ');
      expect([key, valueOf(m, 'payments_http_requests_total', { method, route, status })]).toEqual([key, count]);
      expect([key, valueOf(m, 'payments_http_request_duration_seconds_count', { method, route, status })]).toEqual([key, count]);
      // Every request was answered within the largest finite bucket.
      expect([key, valueOf(m, 'payments_http_request_duration_seconds_bucket', { method, route, status, le: '10' })]).toEqual([key, count]);
    }
    // Nothing else was counted, and no label anywhere holds the secret or a raw path.
    const counted = samplesOf(m, 'payments_http_requests_total');
    expect(counted.reduce((sum, s) => sum + s.value, 0)).toBe([...sent.values()].reduce((x, y) => x + y, 0));
    expect(first.text).not.toContain(SECRET);
    expect(new Set(counted.map((s) => s.labels.route))).toEqual(new Set(['/v1/customers/:id', '/v1/customers', '/pay/:secret', '/v1/auth', 'unmatched']));

    expect(valueOf(m, 'payments_rate_limit_rejections_total', { limiter: 'per_account' })).toBe(perToken429);
    expect(valueOf(m, 'payments_rate_limit_rejections_total', { limiter: 'pay_page' })).toBe(payStatuses.filter((s) => s === 429).length);
    expect(valueOf(m, 'payments_rate_limit_rejections_total', { limiter: 'sign_in' })).toBe(1);
    expect(valueOf(m, 'payments_rate_limit_rejections_total', { limiter: 'public_claims' })).toBe(0);
    expect(valueOf(m, 'payments_rate_limit_rejections_total', { limiter: 'sign_in_busy' })).toBe(0);
    // The scrape itself is the one request in flight.
    expect(valueOf(m, 'payments_http_requests_in_flight')).toBe(1);
    expect(valueOf(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    // The first scrape is counted by the second; neither is written to the request log.
    const second = await scrape(`${api.url}/metrics`, METRICS_TOKEN);
    expect(valueOf(second.samples, 'payments_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);
    const logged = logLines.filter((l) => l.msg === 'request').map((l) => l.path);
    expect(logged).toContain('/v1/customers');
    expect(logged).toContain('/pay/[redacted]');
    expect(logged).not.toContain('/metrics');
  });

  it('gives each app its own registry by default (no process-wide counts)', async () => {
    const other = await startTestApi({}, { METRICS_TOKEN });
    try {
      expect((await fetch(`${other.url}/healthz`)).status).toBe(200);
      const { samples } = await scrape(`${other.url}/metrics`, METRICS_TOKEN);
      expect(samplesOf(samples, 'payments_http_requests_total').map((s) => `${s.labels.route} ${s.value}`)).toEqual(['/healthz 1']);
    } finally {
      await other.close();
    }
  });

  it('answers only `Authorization: Bearer <METRICS_TOKEN>`', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong-token-wrong-token-wrong-token-00' }, { Authorization: `token ${METRICS_TOKEN}` }, { Authorization: METRICS_TOKEN }, { Authorization: `Bearer ${METRICS_TOKEN}x` }] as Record<string, string>[]) {
      const res = await fetch(`${api.url}/metrics`, { headers });
      expect([JSON.stringify(headers), res.status]).toEqual([JSON.stringify(headers), 401]);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const body = await res.json();
      expect(body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_credentials' });
      expect(JSON.stringify(body)).not.toContain('payments_http_requests_total');
    }
    const ok = await fetch(`${api.url}/metrics`, { headers: { Authorization: `bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('payments_http_requests_total');
  });

  it('is not served on the API port without METRICS_TOKEN: 404, as an unknown path', async () => {
    const open = await startTestApi();
    try {
      for (const headers of [{}, { Authorization: 'Bearer anything' }] as Record<string, string>[]) {
        const res = await fetch(`${open.url}/metrics`, { headers });
        expect(res.status).toBe(404);
        const body = await res.json();
        expect(body.error.code).toBe('resource_not_found');
        expect(JSON.stringify(body)).not.toContain('payments_');
      }
    } finally {
      await open.close();
    }
  });
});
