/**
 * Where the sign-in throttle (AuthThrottle) keeps its counts: failures per key (count and time of
 * the last one, forgotten `forgetAfterMs` after it) and attempts per client and minute. In this
 * process's memory by default; in Redis (REDIS_URL) shared by every API process, so that failures
 * on one process lock the (email, client) on all of them.
 */
import type { Redis } from 'ioredis';

export interface FailureCount {
  count: number;
  /** When the last failure was (ms since the epoch, on the throttle's clock). */
  last: number;
}

export interface ThrottleStore {
  /** The failures of each key (undefined: none, or forgotten). */
  failures(keys: string[]): Promise<(FailureCount | undefined)[]>;
  /** One more failure on each key, at `now`. */
  addFailure(keys: string[], now: number): Promise<void>;
  clearFailures(key: string): Promise<void>;
  /** Counts one attempt of `client` in `minute` unless it already made `perMinute`: false then. */
  takeAttempt(client: string, minute: number, perMinute: number): Promise<boolean>;
  /** The attempts `client` made in `minute`. */
  attemptsIn(client: string, minute: number): Promise<number>;
}

/**
 * In this process's memory. Once a minute it drops the budgets of past minutes and failures past
 * `forgetAfterMs`: each entry expires on its own, so a flood of new keys costs memory for a while
 * but never clears the counts of other clients (the old code's clear at 100,000 keys reset the attackers' too).
 */
export function memoryThrottleStore(forgetAfterMs: number, now: () => number = Date.now): ThrottleStore {
  const failures = new Map<string, FailureCount>();
  const attempts = new Map<string, { minute: number; count: number }>();
  let lastSweepMinute = 0;
  const current = (key: string, at: number): FailureCount | undefined => {
    const f = failures.get(key);
    if (f && at - f.last > forgetAfterMs) {
      failures.delete(key);
      return undefined;
    }
    return f;
  };
  const sweepEachMinute = (at: number): void => {
    const minute = Math.floor(at / 60_000);
    if (minute === lastSweepMinute) return;
    lastSweepMinute = minute;
    for (const [k, a] of attempts) if (a.minute !== minute) attempts.delete(k);
    for (const k of [...failures.keys()]) current(k, at);
  };
  const used = (client: string, minute: number): number => {
    const prior = attempts.get(client);
    return prior && prior.minute === minute ? prior.count : 0;
  };
  return {
    async failures(keys) {
      const at = now();
      return keys.map((k) => current(k, at));
    },
    async addFailure(keys, at) {
      for (const key of keys) failures.set(key, { count: (current(key, at)?.count ?? 0) + 1, last: at });
    },
    async clearFailures(key) {
      failures.delete(key);
    },
    async takeAttempt(client, minute, perMinute) {
      sweepEachMinute(now());
      const count = used(client, minute);
      if (count >= perMinute) return false;
      attempts.set(client, { minute, count: count + 1 });
      return true;
    },
    async attemptsIn(client, minute) {
      return used(client, minute);
    },
  };
}

/** Counts one attempt unless the budget is spent, in one step (no two processes both take the last one). */
const TAKE_ATTEMPT = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], 61000)
return 1`;

/**
 * In Redis: a failure key is a hash {count, last} expiring `forgetAfterMs` after its last failure
 * (one MULTI per failure: HINCRBY, HSET, PEXPIRE); an attempt budget is a counter per client and
 * minute taken by a script.
 */
export function redisThrottleStore(client: Redis, forgetAfterMs: number, prefix = 'signin'): ThrottleStore {
  const fkey = (k: string) => `${prefix}:f:${k}`;
  const akey = (c: string, minute: number) => `${prefix}:a:${c}:${minute}`;
  return {
    async failures(keys) {
      const pipeline = client.pipeline();
      for (const k of keys) pipeline.hmget(fkey(k), 'count', 'last');
      const results = (await pipeline.exec()) ?? [];
      return results.map(([err, value]) => {
        if (err) throw err;
        const [count, last] = value as [string | null, string | null];
        return count === null || last === null ? undefined : { count: Number(count), last: Number(last) };
      });
    },
    async addFailure(keys, now) {
      const multi = client.multi();
      for (const k of keys) {
        multi.hincrby(fkey(k), 'count', 1);
        // The latest failure wins even when two processes' clocks differ a little.
        multi.hset(fkey(k), 'last', String(now));
        multi.pexpire(fkey(k), forgetAfterMs);
      }
      const results = (await multi.exec()) ?? [];
      for (const [err] of results) if (err) throw err;
    },
    async clearFailures(key) {
      await client.del(fkey(key));
    },
    async takeAttempt(c, minute, perMinute) {
      return (await client.eval(TAKE_ATTEMPT, 1, akey(c, minute), String(perMinute))) === 1;
    },
    async attemptsIn(c, minute) {
      return Number((await client.get(akey(c, minute))) ?? 0);
    },
  };
}

/**
 * The shared store, and when it fails (Redis down or slow) this process's memory for that call,
 * `onFailure` being told: sign-in stays possible and throttled per process during an outage
 * instead of refusing every owner (docs/adr/0611-shared-counters-in-redis.md).
 */
export function withFallback(primary: ThrottleStore, fallback: ThrottleStore, onFailure: (err: unknown) => void): ThrottleStore {
  const guard =
    <A extends unknown[], R>(f: (s: ThrottleStore) => (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await f(primary)(...args);
      } catch (err) {
        onFailure(err);
        return f(fallback)(...args);
      }
    };
  return {
    failures: guard((s) => s.failures.bind(s)),
    addFailure: guard((s) => s.addFailure.bind(s)),
    clearFailures: guard((s) => s.clearFailures.bind(s)),
    takeAttempt: guard((s) => s.takeAttempt.bind(s)),
    attemptsIn: guard((s) => s.attemptsIn.bind(s)),
  };
}
