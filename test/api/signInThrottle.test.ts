/**
 * Sign-in throttling (src/api/auth/throttle.ts) on a fake clock: who gets locked, who only slowed
 * down, and who waits for a password check. Over HTTP: test/api/auth.test.ts and test/console.
 */
import { AUTH_LIMITS, AuthThrottle, SignInAttempt } from '../../src/api/auth/throttle';

const start = Date.UTC(2026, 0, 1, 12, 0, 0);
function fakeClock() {
  let t = start;
  return { now: () => t, tick: (ms: number) => void (t += ms) };
}
const noMinuteCap = { ...AUTH_LIMITS, attemptsPerMinute: 1_000_000 };
const at = (ip: string, email: string, device?: string): SignInAttempt => ({ ip, email, device });

describe('sign-in locks', () => {
  it('locks an (email, client) after 5 failures, doubling from 1 s to at most 15 min; other clients are not locked; a success clears it', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(noMinuteCap, c.now);
    const fail = async (a: SignInAttempt) => {
      expect(await t.admit(a)).toBe(0);
      await t.failed(a);
    };
    for (let i = 0; i < 5; i++) await fail(at('198.51.100.1', 'v@x.io'));
    expect(await t.admit(at('198.51.100.1', 'v@x.io'))).toBe(0);
    await fail(at('198.51.100.1', 'v@x.io'));
    expect(await t.admit(at('198.51.100.1', 'v@x.io'))).toBe(1);
    // The owner elsewhere, and the same client on another email, go ahead.
    expect(await t.admit(at('192.0.2.1', 'v@x.io'))).toBe(0);
    expect(await t.admit(at('198.51.100.1', 'other@x.io'))).toBe(0);
    const locks: number[] = [];
    for (let i = 0; i < 12; i++) {
      c.tick(AUTH_LIMITS.maxLockMs);
      await fail(at('198.51.100.1', 'v@x.io'));
      locks.push(await t.admit(at('198.51.100.1', 'v@x.io')));
    }
    expect(locks).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900]);
    await t.succeeded(at('198.51.100.1', 'v@x.io'));
    expect(await t.admit(at('198.51.100.1', 'v@x.io'))).toBe(0);
  });

  it('never locks an email for everyone: sixteen failures from sixteen addresses leave the owner on a fresh address free', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(noMinuteCap, c.now);
    for (let i = 0; i < 16; i++) await t.failed(at(`198.51.100.${i}`, 'o@x.io'));
    expect(await t.admit(at('192.0.2.77', 'o@x.io'))).toBe(0);
  });

  it('forgets failures an hour after the last one', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(noMinuteCap, c.now);
    for (let i = 0; i < 6; i++) await t.failed(at('198.51.100.1', 'f@x.io'));
    expect(await t.admit(at('198.51.100.1', 'f@x.io'))).toBe(1);
    expect(await t.slowdownMs(at('192.0.2.1', 'f@x.io'))).toBe(250);
    c.tick(AUTH_LIMITS.forgetAfterMs + 1);
    expect(await t.admit(at('198.51.100.1', 'f@x.io'))).toBe(0);
    expect(await t.slowdownMs(at('192.0.2.1', 'f@x.io'))).toBe(0);
    await t.failed(at('198.51.100.1', 'f@x.io'));
    expect(await t.admit(at('198.51.100.1', 'f@x.io'))).toBe(0);
  });

  it('locks a client after 20 failures over any emails; an IPv6 client is its /64', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(noMinuteCap, c.now);
    for (let i = 1; i <= 20; i++) await t.failed(at(`2a00:1450:4001:80b::${i.toString(16)}`, `u${i}@x.io`));
    expect(await t.admit(at('2a00:1450:4001:80b:ffff::1', 'new@x.io'))).toBe(0);
    await t.failed(at('2a00:1450:4001:80b:ffff::1', 'new@x.io'));
    expect(await t.admit(at('2a00:1450:4001:80b:1234::9', 'another@x.io'))).toBe(1);
    expect(await t.admit(at('2a00:1450:4001:80c::1', 'another@x.io'))).toBe(0);
  });

  it('allows 30 attempts a minute per client whatever their outcome; refused attempts do not count', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(AUTH_LIMITS, c.now);
    for (let i = 0; i < 30; i++) expect(await t.admit(at('192.0.2.1', `ok${i}@x.io`))).toBe(0);
    c.tick(15_000);
    expect(await t.admit(at('192.0.2.1', 'ok@x.io'))).toBe(45);
    expect(await t.admit(at('192.0.2.2', 'ok@x.io'))).toBe(0);
    c.tick(45_000);
    for (let i = 0; i < 30; i++) expect(await t.admit(at('192.0.2.1', `ok${i}@x.io`))).toBe(0);
  });

  it('a flood of new clients in one minute resets no other client\'s budget (old entries expire instead)', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(AUTH_LIMITS, c.now);
    for (let i = 0; i < 30; i++) expect(await t.admit(at('192.0.2.1', 'a@x.io'))).toBe(0);
    for (let i = 0; i < 100_001; i++) await t.admit(at(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 'a@x.io'));
    expect(await t.admit(at('192.0.2.1', 'a@x.io'))).toBeGreaterThan(0);
    c.tick(60_000);
    expect(await t.admit(at('192.0.2.1', 'a@x.io'))).toBe(0);
  });
});

describe('sign-in slow-down per email', () => {
  it('slows every attempt on an email past 5 failures from any clients, 250 ms doubling to 2 s, and never refuses it', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(noMinuteCap, c.now);
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      await t.failed(at(`198.51.100.${i}`, 's@x.io'));
      delays.push(await t.slowdownMs(at('192.0.2.1', 's@x.io')));
      expect(await t.admit(at('192.0.2.1', 's@x.io'))).toBe(0);
    }
    expect(delays).toEqual([0, 0, 0, 0, 0, 250, 500, 1000, 2000, 2000]);
    expect(await t.slowdownMs(at('192.0.2.1', 'other@x.io'))).toBe(0);
    // The owner's success does not forgive the others' guessing.
    await t.succeeded(at('192.0.2.1', 's@x.io'));
    expect(await t.slowdownMs(at('192.0.2.1', 's@x.io'))).toBe(2000);
  });

  it('lets the owner in from a new address within 5 s during a storm of 60 failures a minute from 20 addresses', async () => {
    const c = fakeClock();
    // The pause runs on the fake clock: what the owner waits is what the clock moved.
    const t = new AuthThrottle(AUTH_LIMITS, c.now, async (ms) => c.tick(ms));
    let refused = 0;
    for (let second = 0; second < 30 * 60; second++) {
      const a = at(`198.51.100.${second % 20}`, 'owner@x.io');
      if (await t.admit(a) > 0) refused += 1;
      else await t.failed(a);
      c.tick(1000);
    }
    // The storm's addresses are locked by now; the email is only slowed.
    expect(refused).toBeGreaterThan(1000);
    const owner = at('203.0.113.50', 'owner@x.io');
    const before = c.now();
    expect(await t.admit(owner)).toBe(0);
    await t.pause(await t.slowdownMs(owner));
    expect(await t.run(owner.ip, async () => 'signed in')).toBe('signed in');
    expect(c.now() - before).toBeLessThanOrEqual(AUTH_LIMITS.emailSlowdown.maxDelayMs);
    expect(AUTH_LIMITS.emailSlowdown.maxDelayMs).toBeLessThan(5000);
  });

  it('a browser with the email\'s device cookie is neither slowed nor locked by others\' failures, even from their address', async () => {
    const c = fakeClock();
    const t = new AuthThrottle(noMinuteCap, c.now);
    for (let i = 0; i < 25; i++) await t.failed(at('198.51.100.1', `d${i % 2}@x.io`));
    expect(await t.admit(at('198.51.100.1', 'd0@x.io'))).toBeGreaterThan(0);
    const known = at('198.51.100.1', 'd0@x.io', 'device-1');
    expect(await t.slowdownMs(known)).toBe(0);
    expect(await t.admit(known)).toBe(0);
    // Its own failures lock (email, device), not the email.
    for (let i = 0; i < 6; i++) await t.failed(known);
    expect(await t.admit(known)).toBe(1);
    expect(await t.admit(at('198.51.100.1', 'd0@x.io', 'device-2'))).toBe(0);
  });
});

describe('password checks at once', () => {
  /** A check the test finishes by hand. */
  function manualChecks() {
    let active = 0;
    let most = 0;
    const release: Array<() => void> = [];
    const check = () =>
      new Promise<string>((resolve) => {
        active += 1;
        most = Math.max(most, active);
        release.push(() => {
          active -= 1;
          resolve('ok');
        });
      });
    const settle = async (count: number) => {
      let done = 0;
      while (done < count) {
        await new Promise((r) => setImmediate(r));
        const open = release.splice(0);
        open.forEach((f) => f());
        done += open.length;
      }
    };
    return { check, settle, most: () => most };
  }

  it('runs at most 2 at once, with 50 waiting in all; beyond that it is busy', async () => {
    const t = new AuthThrottle();
    const m = manualChecks();
    const runs = Array.from({ length: 52 }, (_, i) => t.run(`198.51.100.${i}`, m.check));
    await expect(t.run('192.0.2.1', m.check)).rejects.toThrow('Too many sign-ins in progress');
    await m.settle(52);
    expect(await Promise.all(runs)).toHaveLength(52);
    expect(m.most()).toBe(2);
    expect(await t.run('192.0.2.1', async () => 'free again')).toBe('free again');
  });

  it('lets one client wait for 2 checks only, and serves waiting clients in turn: ten busy clients deny nobody else', async () => {
    const t = new AuthThrottle();
    const m = manualChecks();
    const order: string[] = [];
    const runs: Array<Promise<unknown>> = [];
    let busy = 0;
    const submit = (ip: string) =>
      runs.push(
        t.run(ip, async () => {
          order.push(ip);
          return m.check();
        }).catch((err: Error) => {
          expect(err.message).toBe('Too many sign-ins in progress');
          busy += 1;
        }),
      );
    // Ten clients send 30 attempts each at once: each keeps at most 2 running or waiting beyond the 2 slots.
    for (let i = 0; i < 30; i++) for (let k = 0; k < 10; k++) submit(`198.51.100.${k}`);
    submit('203.0.113.50');
    await new Promise((r) => setImmediate(r));
    expect(busy).toBe(300 - 2 - 20);
    await m.settle(23);
    await Promise.all(runs);
    // The newcomer waited for one round of the others, not for all of them.
    expect(order.indexOf('203.0.113.50')).toBeLessThanOrEqual(12);
  });

  it('a full queue makes way for a client with nothing waiting: the flooding client loses its newest', async () => {
    const t = new AuthThrottle({ ...AUTH_LIMITS, queuedChecks: 4, queuedChecksPerClient: 2 });
    const m = manualChecks();
    const outcomes: string[] = [];
    const submit = (ip: string) => t.run(ip, m.check).then(() => `${ip} ok`, () => `${ip} busy`).then((o) => void outcomes.push(o));
    const runs = [submit('192.0.2.1'), submit('192.0.2.2'), submit('192.0.2.1'), submit('192.0.2.1'), submit('192.0.2.3'), submit('192.0.2.4')];
    // Running: .1 and .2. Waiting: .1, .1, .3, .4 (full); .5 takes .1's newest place.
    runs.push(submit('192.0.2.5'));
    await new Promise((r) => setImmediate(r));
    expect(outcomes).toEqual(['192.0.2.1 busy']);
    await m.settle(6);
    await Promise.all(runs);
    expect(outcomes.filter((o) => o.endsWith('ok'))).toHaveLength(6);
  });
});
