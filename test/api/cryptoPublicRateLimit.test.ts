import { useTestDatabase } from '../support/db';
import { client, startTestApi, TestApi } from '../support/api';

const PUBLIC_CLAIM_RATE_PER_MINUTE = 12;
useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { PUBLIC_RATE_LIMIT_PER_MINUTE: String(PUBLIC_CLAIM_RATE_PER_MINUTE) });
});
afterAll(() => api.close());

describe('public claim routes', () => {
  it('are rate-limited per client IP', async () => {
    const anon = client(api.url);
    // Align to the start of a fresh one-minute window so the count is exact.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    let limited = null;
    for (let i = 0; i < PUBLIC_CLAIM_RATE_PER_MINUTE + 1; i++) {
      const res = await anon.get(`/v1/public/payment_claim_links/${'x'.repeat(43)}`);
      if (res.status === 429) {
        limited = { i, res };
        break;
      }
      expect(res.status).toBe(404);
    }
    expect(limited?.i).toBe(PUBLIC_CLAIM_RATE_PER_MINUTE);
    expect(limited?.res.body.error.code).toBe('rate_limit_error');
    expect(limited?.res.headers.get('retry-after')).toBe('60');
    // POST shares the window.
    expect((await anon.post(`/v1/public/payment_claim_links/${'x'.repeat(43)}/claims`, {})).status).toBe(429);
  });

  it('include the pay page /pay/<secret>, at the same rate per IP', async () => {
    const anon = client(api.url);
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    const statuses: number[] = [];
    for (let i = 0; i <= PUBLIC_CLAIM_RATE_PER_MINUTE; i++) statuses.push((await anon.get(`/pay/${'y'.repeat(43)}`)).status);
    expect(statuses.slice(0, -1).every((s) => s === 404)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    const r = await anon.get(`/pay/${'y'.repeat(43)}`);
    expect(r.body.error.code).toBe('rate_limit_error');
    expect(r.headers.get('retry-after')).toBe('60');
  });
});
