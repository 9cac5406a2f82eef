import type Router from '@koa/router';
import type { Next } from 'koa';
import type { AppState, Ctx } from '../context';
import { ApiError, AuthFlowError } from '../../lib/errors';
import { authBody } from './schema';
import { AuthBusyError, AuthThrottle } from './throttle';
import { authenticate, loginEmail, me } from '../../services/accounts';
import { isDatabaseUnavailable } from '../../models/errors';

/** What refused a sign-in: throttling (429), or too many checks already running (503). */
export type SignInRejection = 'sign_in' | 'sign_in_busy';

/** Refuses attempts while the client or the email is locked; counts each failed sign-in (401). */
function throttled(throttle: AuthThrottle, onReject: (why: SignInRejection) => void) {
  return async (ctx: Ctx, next: Next) => {
    const body = ctx.request.body as { email?: unknown } | null | undefined;
    const email = typeof body?.email === 'string' ? loginEmail(body.email) : '';
    const wait = throttle.admit(ctx.ip, email);
    if (wait > 0) {
      onReject('sign_in');
      ctx.set('Retry-After', String(wait));
      throw new AuthFlowError(429, `Too many sign-in attempts, retry after ${wait} seconds`);
    }
    try {
      await throttle.run(next);
      throttle.succeeded(email);
    } catch (err) {
      if (err instanceof AuthBusyError) {
        onReject('sign_in_busy');
        ctx.set('Retry-After', '1');
        throw new AuthFlowError(503, 'Too many sign-ins in progress, retry shortly');
      }
      if (err instanceof AuthFlowError && err.status === 401) throttle.failed(ctx.ip, email);
      throw err;
    }
  };
}

/** POST /v1/auth answers in the simple `{error: string}` format, as the spec shows. */
export function authRoutes(router: Router<AppState>, throttle: AuthThrottle, onReject: (why: SignInRejection) => void = () => undefined) {
  router.post('/auth', throttled(throttle, onReject), async (ctx: Ctx) => {
    let input;
    try {
      input = authBody(ctx.request.body);
    } catch (err) {
      if (err instanceof ApiError) throw new AuthFlowError(err.status, err.message);
      throw err;
    }
    try {
      ctx.body = await authenticate(input);
    } catch (err) {
      // Still the simple format: this route answers every one of its own failures that way.
      if (!isDatabaseUnavailable(err)) throw err;
      ctx.set('Retry-After', '5');
      throw new AuthFlowError(503, 'The database is unavailable; retry later');
    }
  });
}

export function meRoutes(router: Router<AppState>) {
  router.get('/me', async (ctx: Ctx) => {
    ctx.body = await me(ctx.state.auth!);
  });
}
