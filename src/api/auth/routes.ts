import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { ApiError, AuthFlowError } from '../../lib/errors';
import { authBody } from './schema';
import { authenticate, me } from '../../services/accounts';

/** POST /v1/auth answers in the simple `{error: string}` format, as the spec shows. */
export function authRoutes(router: Router<AppState>) {
  router.post('/auth', async (ctx: Ctx) => {
    let input;
    try {
      input = authBody(ctx.request.body);
    } catch (err) {
      if (err instanceof ApiError) throw new AuthFlowError(err.status, err.message);
      throw err;
    }
    ctx.body = await authenticate(input);
  });
}

export function meRoutes(router: Router<AppState>) {
  router.get('/me', async (ctx: Ctx) => {
    ctx.body = await me(ctx.state.auth!);
  });
}
