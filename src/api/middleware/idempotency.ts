import type { Next } from 'koa';
import { ApiError } from '../../lib/errors';
import { isDatabaseUnavailable } from '../../models/errors';
import { completeKey, completeKeyLater, reserveKey } from '../../services/writes/idempotency';
import { scopeOf, type Ctx } from '../context';
import { renderError } from './errors';

const KEY = /^[\x21-\x7e]{1,255}$/;

/** Idempotency-Key on authenticated POSTs. Errors are rendered here so their response is kept too. The reservation is this request's (its owner token): only it completes or releases the key. */
export function idempotency(docBase: string) {
  return async (ctx: Ctx, next: Next) => {
    // Present but blank (Node trims the value, so whitespace alone reads as '') is a bad key, not no key.
    if (ctx.method !== 'POST' || ctx.headers['idempotency-key'] === undefined) return next();
    const key = ctx.get('Idempotency-Key');
    if (!KEY.test(key)) throw ApiError.invalid('Idempotency-Key must be 1 to 255 printable characters', 'Idempotency-Key');
    const reservation = await reserveKey(scopeOf(ctx), key, ctx.method, ctx.path, ctx.request.body);
    if (reservation.kind === 'replay') {
      ctx.status = reservation.status;
      ctx.body = reservation.body ?? undefined;
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    // With the request's hash: the same key reused with another body once it expired (24 h) is a new request.
    ctx.state.idempotencyKeyId = `${reservation.id}:${reservation.requestHash}`;
    try {
      await next();
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // Answered 503 at once: releasing the key now would wait on the database again. It is
        // released once the database answers (or goes stale), so a retry then runs the request.
        completeKeyLater(reservation, 503, null);
      } else if (err instanceof ApiError) {
        await completeKey(reservation, err.status, renderError(err, docBase));
      } else {
        await completeKey(reservation, 500, null);
      }
      throw err;
    }
    try {
      await completeKey(reservation, ctx.status, ctx.body);
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      // The request did its work: its own answer stands (a 503 would invite a retry that runs it
      // twice), and the response is kept for the key as soon as the database answers again.
      completeKeyLater(reservation, ctx.status, ctx.body);
    }
  };
}
