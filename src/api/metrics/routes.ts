import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import type { ApiMetrics } from '../../metrics/api';
import { ApiError } from '../../lib/errors';
import { bearerMatches } from '../../cryptography/tokens';

/**
 * GET /metrics: this process's metrics in Prometheus text format, outside /v1. It shows the
 * process's start time, runtime version and traffic per route, so it answers only
 * `Authorization: Bearer <METRICS_TOKEN>`; without a token configured it is not served at all
 * (404, as an unknown path), since the API port is the public one.
 */
export function metricsRoutes(router: Router<AppState>, metrics: ApiMetrics, token: string | null) {
  router.get('/metrics', async (ctx: Ctx) => {
    if (token === null) throw ApiError.notFound(`Unrecognized request URL (${ctx.method} ${ctx.path})`);
    if (!bearerMatches(ctx.get('Authorization'), token)) {
      throw new ApiError(401, 'authentication_error', 'invalid_credentials', 'Invalid or missing metrics token', null, undefined, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    ctx.set('Content-Type', metrics.register.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await metrics.register.metrics();
  });
}
