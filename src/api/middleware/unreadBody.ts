import type { IncomingMessage } from 'node:http';
import type { Next } from 'koa';
import type { Ctx } from '../context';

/** True when the request announced a body (a length above 0, or chunks). */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * An answer sent before the request's body was read to its end (a 413 refused on its length or
 * halfway, a body no route reads) closes the connection (`Connection: close`): the rest of the
 * body would be read as the next request, and Deno keeps such a connection open unread, so the
 * next request on it hung 5.8 s and then got ECONNRESET. Node closes the socket after an answer
 * with that header. Outermost but one, so it sees the answer the error middleware rendered.
 */
export function closeAfterUnreadBody() {
  return async (ctx: Ctx, next: Next) => {
    try {
      await next();
    } finally {
      if (!ctx.headerSent && hasBody(ctx.req) && !ctx.req.readableEnded) ctx.set('Connection', 'close');
    }
  };
}
