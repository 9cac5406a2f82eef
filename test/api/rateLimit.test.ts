/**
 * The rate limit middleware on its in-memory store (rate-limiter-flexible), with Jest's fake
 * timers as the store's clock: windows per key that end on their own. Over HTTP: test/api/http.test.ts.
 */
import { ApiError } from '../../src/lib/errors';
import { memoryCounters, rateLimit, WindowCounter } from '../../src/api/middleware/rateLimit';
import type { Ctx } from '../../src/api/context';

/** Runs the middleware for one request of `key`: its status (200 or 429) and headers. */
async function request(limit: ReturnType<typeof rateLimit>, key: string) {
  const headers: Record<string, string> = {};
  const ctx = { key, set: (h: Record<string, string>) => Object.assign(headers, h) } as unknown as Ctx;
  try {
    await limit(ctx, async () => undefined);
    return { status: 200, headers };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, headers: err.headers ?? {} };
  }
}

describe('rate limit windows', () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.UTC(2026, 0, 1, 12, 0, 59) }));
  afterEach(() => jest.useRealTimers());
  const keyOf = (ctx: Ctx) => (ctx as unknown as { key: string }).key;

  it('allows perMinute requests per key in a window from its first request, then 429 with Retry-After and RateLimit-* headers', async () => {
    let rejected = 0;
    const limit = rateLimit(memoryCounters()('test', 3), keyOf, () => (rejected += 1));
    const first = await request(limit, 'a');
    expect(first.headers).toEqual({ 'RateLimit-Limit': '3', 'RateLimit-Remaining': '2', 'RateLimit-Reset': '60' });
    // A clock minute ends here; the key's window does not.
    jest.advanceTimersByTime(2_000);
    expect((await request(limit, 'a')).status).toBe(200);
    expect((await request(limit, 'a')).status).toBe(200);
    const refused = await request(limit, 'a');
    expect(refused).toEqual({ status: 429, headers: { 'RateLimit-Limit': '3', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '58', 'Retry-After': '60' } });
    expect(rejected).toBe(1);
    expect((await request(limit, 'b')).status).toBe(200);
    jest.advanceTimersByTime(58_000);
    expect((await request(limit, 'a')).status).toBe(200);
  });

  it('a flood of distinct keys resets no other key\'s window: windows expire one by one, never all at once', async () => {
    const limit = rateLimit(memoryCounters()('test', 2), keyOf);
    for (let i = 0; i < 3; i++) await request(limit, 'attacker');
    for (let i = 0; i < 100_001; i++) await request(limit, `flood-${i}`);
    expect((await request(limit, 'attacker')).status).toBe(429);
    jest.advanceTimersByTime(60_000);
    expect((await request(limit, 'attacker')).status).toBe(200);
  });

  it('takes any store behind the WindowCounter interface (a shared one later)', async () => {
    const seen: string[] = [];
    const shared: WindowCounter = { perMinute: 1, hit: async (key) => (seen.push(key), { allowed: seen.length <= 1, remaining: 0, resetMs: 1000 }) };
    const limit = rateLimit(shared, keyOf);
    expect((await request(limit, 'k')).status).toBe(200);
    expect((await request(limit, 'k')).status).toBe(429);
    expect(seen).toEqual(['k', 'k']);
  });
});
