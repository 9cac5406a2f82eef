import type Router from '@koa/router';
import type { Next } from 'koa';
import type { AppState, Ctx } from '../context';
import { ApiError, AuthFlowError } from '../../lib/errors';
import { authBody } from './schema';
import { AuthBusyError, AuthThrottle, SignInAttempt } from './throttle';
import { authenticate, loginEmail, me } from '../../services/accounts/accounts';
import { isDatabaseUnavailable } from '../../models/errors';

/** What refused a sign-in: throttling (429), or too many checks already running (503). */
export type SignInRejection = 'sign_in' | 'sign_in_busy';

/** The throttle both sign-ins share, and who counts its refusals (the app's metrics). */
export interface SignInGuard {
  throttle: AuthThrottle;
  onReject: (why: SignInRejection) => void;
}

/**
 * One sign-in check through the throttle, for POST /v1/auth and the console alike: refused while
 * locked (429) or when the client may not wait for a check (503), in the simple format with
 * `Retry-After`, each refusal told to `onReject`; paused first while others fail on the email; a
 * 401 counted as a failure, a success clearing its (email, client) lock.
 */
export async function throttledSignIn<T>(ctx: Ctx, guard: SignInGuard, attempt: SignInAttempt, check: () => Promise<T>): Promise<T> {
  const { throttle, onReject } = guard;
  const wait = await throttle.admit(attempt);
  if (wait > 0) {
    onReject('sign_in');
    ctx.set('Retry-After', String(wait));
    throw new AuthFlowError(429, `Too many sign-in attempts, retry after ${wait} seconds`);
  }
  // Before the queue, so a slowed attempt holds no check slot.
  await throttle.pause(await throttle.slowdownMs(attempt));
  try {
    const result = await throttle.run(attempt.ip, check);
    await throttle.succeeded(attempt);
    return result;
  } catch (err) {
    if (err instanceof AuthBusyError) {
      onReject('sign_in_busy');
      ctx.set('Retry-After', '1');
      throw new AuthFlowError(503, 'Too many sign-ins in progress, retry shortly');
    }
    if (err instanceof AuthFlowError && err.status === 401) await throttle.failed(attempt);
    throw err;
  }
}

/** Throttles POST /v1/auth by the body's email and the client's address (no device cookie: API clients have none). */
function throttled(guard: SignInGuard) {
  return async (ctx: Ctx, next: Next) => {
    const body = ctx.request.body as { email?: unknown } | null | undefined;
    const email = typeof body?.email === 'string' ? loginEmail(body.email) : '';
    await throttledSignIn(ctx, guard, { ip: ctx.ip, email }, next);
  };
}

/** POST /v1/auth answers in the simple `{error: string}` format, as the spec shows. */
export function authRoutes(router: Router<AppState>, guard: SignInGuard) {
  router.post('/auth', throttled(guard), async (ctx: Ctx) => {
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
