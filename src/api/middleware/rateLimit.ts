import type { Next } from 'koa';
import { ApiError } from '../../lib/errors';
import type { Ctx } from '../context';

/**
 * Fixed one-minute window per key (the token hash, or the client IP for public routes).
 * In-process: with several API processes each enforces its own window. `onReject` is told of
 * each refusal (the app counts them in its metrics).
 */
export function rateLimit(perMinute: number, keyOf: (ctx: Ctx) => string, onReject: () => void = () => undefined) {
  const windows = new Map<string, { start: number; count: number }>();
  return async (ctx: Ctx, next: Next) => {
    const now = Date.now();
    const windowStart = now - (now % 60_000);
    const key = keyOf(ctx);
    let w = windows.get(key);
    if (!w || w.start !== windowStart) {
      if (windows.size > 100_000) windows.clear();
      w = { start: windowStart, count: 0 };
      windows.set(key, w);
    }
    w.count += 1;
    const remaining = Math.max(0, perMinute - w.count);
    const reset = Math.ceil((windowStart + 60_000 - now) / 1000);
    const headers = { 'RateLimit-Limit': String(perMinute), 'RateLimit-Remaining': String(remaining), 'RateLimit-Reset': String(reset) };
    if (w.count > perMinute) {
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
