import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import type { ApiMetrics } from '../../metrics/api';

/**
 * GET /metrics: this process's metrics in Prometheus text format. Outside /v1 and without
 * authentication like /healthz: it holds counts by route template, never paths, tokens or ids.
 */
export function metricsRoutes(router: Router<AppState>, metrics: ApiMetrics) {
  router.get('/metrics', async (ctx: Ctx) => {
    ctx.set('Content-Type', metrics.register.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await metrics.register.metrics();
  });
}
