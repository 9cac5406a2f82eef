import type { Next } from 'koa';
import type { Logger } from 'pino';
import type { Ctx } from '../context';

/** A request id (taken from X-Request-Id when sane) and one log line per request. */
export function requestLog(logger: Logger) {
  return async (ctx: Ctx, next: Next) => {
    const incoming = ctx.get('X-Request-Id');
    ctx.state.requestId = /^[\w.-]{1,100}$/.test(incoming) ? incoming : crypto.randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    const start = performance.now();
    try {
      await next();
    } finally {
      logger.info(
        { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - start) },
        'request',
      );
    }
  };
}
