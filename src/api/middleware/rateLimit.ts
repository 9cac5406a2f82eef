import type { Next } from 'koa';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { ApiError } from '../../lib/errors';
import type { Ctx } from '../context';

/** What one request's count says: whether it may go on, and the window's state for the headers. */
export interface WindowHit {
  allowed: boolean;
  remaining: number;
  /** Milliseconds until the key's window ends. */
  resetMs: number;
}

/** One named limit: `perMinute` requests per key in a one-minute window that starts at the key's first request. */
export interface WindowCounter {
  readonly perMinute: number;
  hit(key: string): Promise<WindowHit>;
}

/**
 * Where the counts live. In this process's memory by default (`memoryCounters`): with several API
 * processes each counts for itself. A shared store (rate-limiter-flexible's Redis, Mongo or
 * Postgres limiters, through `flexibleCounter`) can take its place without touching the routes.
 */
export type CounterStore = (name: string, perMinute: number) => WindowCounter;

/**
 * A rate-limiter-flexible limiter (any of its stores) as a WindowCounter. With `fallback`, a store
 * failure (Redis down or slow) is reported to `onStoreFailure` and the hit is counted by the
 * fallback instead (this process's memory): the limit then holds per process until the store is back.
 */
export function flexibleCounter(
  limiter: RateLimiterAbstract,
  fallback?: { limiter: RateLimiterAbstract; onStoreFailure: (err: unknown) => void },
): WindowCounter {
  const consume = async (l: RateLimiterAbstract, key: string): Promise<WindowHit> => {
    try {
      const res = await l.consume(key);
      return { allowed: true, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
    } catch (err) {
      // The library rejects with the window's state when the key is over its points; anything else is a store failure.
      if (!(err instanceof RateLimiterRes)) throw err;
      return { allowed: false, remaining: 0, resetMs: err.msBeforeNext };
    }
  };
  return {
    perMinute: limiter.points,
    async hit(key) {
      if (!fallback) return consume(limiter, key);
      try {
        return await consume(limiter, key);
      } catch (err) {
        fallback.onStoreFailure(err);
        return consume(fallback.limiter, key);
      }
    },
  };
}

/** Counts in this process's memory; each key's window is dropped when it ends (no global clear that a flood of keys could trigger). */
export function memoryCounters(): CounterStore {
  return (name, perMinute) => flexibleCounter(new RateLimiterMemory({ keyPrefix: name, points: perMinute, duration: 60 }));
}

/**
 * Counts in Redis, shared by every API process given the same server (REDIS_URL): one atomic
 * INCR + PEXPIRE per hit (rate-limiter-flexible's script). When Redis fails a hit (not connected,
 * or no answer within the client's `commandTimeout`), the hit is counted in this process's memory instead and
 * `onStoreFailure` is told (the app logs it and counts it in its metrics): the API stays up with
 * per-process limits rather than refusing everything or limiting nothing (docs/adr/0611-shared-counters-in-redis.md).
 */
export function redisCounters(client: Redis, onStoreFailure: (err: unknown) => void): CounterStore {
  return (name, perMinute) => {
    const options = { keyPrefix: `rl:${name}`, points: perMinute, duration: 60 };
    return flexibleCounter(new RateLimiterRedis({ ...options, storeClient: client, rejectIfRedisNotReady: true }), {
      limiter: new RateLimiterMemory(options),
      onStoreFailure,
    });
  };
}

/**
 * Refuses a key's requests past the counter's limit with 429 `rate_limit_error`, `Retry-After: 60`
 * and `RateLimit-*` headers. `onReject` is told of each refusal (the app counts them in its metrics).
 */
export function rateLimit(counter: WindowCounter, keyOf: (ctx: Ctx) => string, onReject: () => void = () => undefined) {
  return async (ctx: Ctx, next: Next) => {
    const { allowed, remaining, resetMs } = await counter.hit(keyOf(ctx));
    const headers = {
      'RateLimit-Limit': String(counter.perMinute),
      'RateLimit-Remaining': String(remaining),
      'RateLimit-Reset': String(Math.max(0, Math.ceil(resetMs / 1000))),
    };
    if (!allowed) {
      onReject();
      throw new ApiError(429, 'invalid_request_error', 'rate_limit_error', 'Too many requests, retry after 60 seconds', null, undefined, {
        ...headers,
        'Retry-After': '60',
      });
    }
    ctx.set(headers);
    await next();
  };
}
