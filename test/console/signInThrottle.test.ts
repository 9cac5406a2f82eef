/**
 * The console's sign-in under the shared throttle: its refusals counted in /metrics like
 * POST /v1/auth's, and the device cookie that keeps a known browser out of others' storms.
 */
import { Registry } from 'prom-client';
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { createApiMetrics } from '../../src/metrics/api';
import { AUTH_LIMITS, AuthThrottle } from '../../src/api/auth/throttle';

useTestDatabase();

const browser = consoleBrowser;

async function rejections(metrics: ReturnType<typeof createApiMetrics>, limiter: string) {
  return (await metrics.rateLimitRejections.get()).values.find((v) => v.labels.limiter === limiter)?.value;
}

describe('console sign-in throttling', () => {
  it('counts its 429 and 503 in /metrics as POST /v1/auth\'s are', async () => {
    const metrics = createApiMetrics(new Registry());
    const locked = await startTestApi({ metrics, authThrottle: new AuthThrottle({ ...AUTH_LIMITS, attemptsPerMinute: 0 }) });
    const busyMetrics = createApiMetrics(new Registry());
    // No free slot and no room to wait: every check is refused as busy.
    const busy = await startTestApi({ metrics: busyMetrics, authThrottle: new AuthThrottle({ ...AUTH_LIMITS, concurrentChecks: 0, queuedChecksPerClient: 0 }) });
    try {
      const a = await newAccount(locked.url);
      const refused = await browser(locked.url, '').signIn(a.email, a.password);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.text).toContain('Too many sign-in attempts');
      expect(await rejections(metrics, 'sign_in')).toBe(1);

      const overloaded = await browser(busy.url, '').signIn(a.email, a.password);
      expect(overloaded.status).toBe(503);
      expect(overloaded.headers.get('retry-after')).toBe('1');
      expect(await rejections(busyMetrics, 'sign_in_busy')).toBe(1);
    } finally {
      await locked.close();
      await busy.close();
    }
  });

  it('a browser that signed in before is neither slowed nor locked by others\' failures on its email; others are slowed, not refused', async () => {
    const pauses: number[] = [];
    // Pauses are recorded, not slept: the test sees who was slowed without waiting.
    const throttle = new AuthThrottle(AUTH_LIMITS, Date.now, async (ms) => void pauses.push(ms));
    const app = await startTestApi({ authThrottle: throttle }, { TRUST_PROXY: 'true' });
    try {
      const a = await newAccount(app.url);
      const known = browser(app.url, '203.0.113.5');
      expect((await known.signIn(a.email, a.password)).status).toBe(303);
      expect(known.jar.has('console_device')).toBe(true);
      known.jar.delete('console_session'); // the browser was closed; its device cookie stays

      // A storm on the email from many addresses, and failures from the browser's own (shared) address.
      for (let i = 0; i < 10; i++) await throttle.failed({ ip: `198.51.100.${i}`, email: a.email });
      for (let i = 0; i < 10; i++) await throttle.failed({ ip: '203.0.113.5', email: a.email });

      const stranger = browser(app.url, '203.0.113.5');
      expect((await stranger.signIn(a.email, a.password)).status).toBe(429);
      expect(pauses).toEqual([]);
      expect((await known.signIn(a.email, a.password)).status).toBe(303);
      expect(pauses).toEqual([]);
      // The owner on a new browser and address: slowed down (at most 2 s), then signed in.
      expect((await browser(app.url, '192.0.2.44').signIn(a.email, a.password)).status).toBe(303);
      expect(pauses).toEqual([AUTH_LIMITS.emailSlowdown.maxDelayMs]);
      // A device cookie is good for its own email only.
      const b = await newAccount(app.url);
      for (let i = 0; i < 10; i++) await throttle.failed({ ip: '203.0.113.5', email: b.email });
      known.jar.delete('console_session');
      expect((await known.signIn(b.email, b.password)).status).toBe(429);
    } finally {
      await app.close();
    }
  });
});
