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
    // Each client's window starts at its first request: the count is exact whatever the clock says.
    const anon = client(api.url);
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
    const statuses: number[] = [];
    for (let i = 0; i <= PUBLIC_CLAIM_RATE_PER_MINUTE; i++) statuses.push((await anon.get(`/pay/${'y'.repeat(43)}`)).status);
    expect(statuses.slice(0, -1).every((s) => s === 404)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    const r = await anon.get(`/pay/${'y'.repeat(43)}`);
    expect(r.body.error.code).toBe('rate_limit_error');
    expect(r.headers.get('retry-after')).toBe('60');
  });

  it('count an IPv6 client by its /64: a fresh interface id per request gets no fresh window', async () => {
    const proxied = await startTestApi({}, { PUBLIC_RATE_LIMIT_PER_MINUTE: String(PUBLIC_CLAIM_RATE_PER_MINUTE), TRUST_PROXY: 'true' });
    try {
      const anon = client(proxied.url);
      const from = (ip: string) => ({ 'X-Forwarded-For': ip });
      const statuses: number[] = [];
      for (let i = 0; i <= PUBLIC_CLAIM_RATE_PER_MINUTE; i++) {
        statuses.push((await anon.get(`/v1/public/payment_claim_links/${'x'.repeat(43)}`, from(`2001:db8:1:2:${(i + 1).toString(16)}::${i}`))).status);
      }
      expect(statuses).toEqual([...Array(PUBLIC_CLAIM_RATE_PER_MINUTE).fill(404), 429]);
      for (let i = 0; i < 2; i++) expect((await anon.get(`/pay/${'x'.repeat(43)}`, from(`2001:db8:1:2::${i + 100}`))).status).toBe(404);
      // The next /64, and an IPv4 client, are other clients.
      expect((await anon.get(`/v1/public/payment_claim_links/${'x'.repeat(43)}`, from('2001:db8:1:3::1'))).status).toBe(404);
      expect((await anon.get(`/v1/public/payment_claim_links/${'x'.repeat(43)}`, from('::ffff:198.51.100.3'))).status).toBe(404);
    } finally {
      await proxied.close();
    }
  });
});
