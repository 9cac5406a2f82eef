import type { Next } from 'koa';
import type { Logger } from 'pino';
import type { Ctx } from '../context';

// Payment claim link secrets are bearer credentials: they never reach the logs. Case-insensitive
// because the router is.
const SECRET_PATHS = [/^(\/pay\/)[^/]+/i, /^((?:\/api)?\/v1\/public\/payment_claim_links\/)[^/]+/i];

/** The request path as logged: link secrets replaced by `[redacted]`. */
export function loggedPath(path: string): string {
  return SECRET_PATHS.reduce((p, re) => p.replace(re, '$1[redacted]'), path);
}

/**
 * A request id (taken from X-Request-Id when sane) and one log line per request, except the
 * successful answers on `quietPaths` (a scrape every few seconds would drown the log).
 */
export function requestLog(logger: Logger, quietPaths: ReadonlySet<string> = new Set()) {
  return async (ctx: Ctx, next: Next) => {
    const incoming = ctx.get('X-Request-Id');
    ctx.state.requestId = /^[\w.-]{1,100}$/.test(incoming) ? incoming : crypto.randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    const start = performance.now();
    try {
      await next();
    } finally {
      if (!(quietPaths.has(ctx.path) && ctx.status < 400)) logger.info(
        { requestId: ctx.state.requestId, method: ctx.method, path: loggedPath(ctx.path), status: ctx.status, ms: Math.round(performance.now() - start) },
        'request',
      );
    }
  };
}
