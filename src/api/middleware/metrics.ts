import type { Next } from 'koa';
import type { Ctx } from '../context';
import { ApiMetrics, UNMATCHED_ROUTE } from '../../metrics/api';

type RouterLayer = { path: unknown; methods: string[] };

/**
 * The route template that answered (`/v1/customers/:id`), or `unmatched`. It is the layer the
 * router ran for this method: the same value as `ctx._matchedRoute` once the route ran, but
 * `_matchedRoute` is left on a `router.use()` layer's prefix regex when auth or a limiter
 * refused the request first. The raw path never becomes a label (`/pay/<secret>`).
 */
export function routeTemplate(ctx: Ctx): string {
  const matched = (ctx as unknown as { matched?: RouterLayer[] }).matched ?? [];
  const layer = [...matched].reverse().find((l) => l.methods.includes(ctx.method));
  return layer ? String(layer.path) : UNMATCHED_ROUTE;
}

/** Outermost middleware: counts and times every request with the status the client got. */
export function httpMetrics(metrics: ApiMetrics) {
  return async (ctx: Ctx, next: Next) => {
    metrics.httpInFlight.inc();
    const started = performance.now();
    let failed = false;
    try {
      await next();
    } catch (err) {
      failed = true; // Koa answers 500 for what the error middleware let through
      throw err;
    } finally {
      const labels = { method: ctx.method, route: routeTemplate(ctx), status: failed ? '500' : String(ctx.status) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
      metrics.httpInFlight.dec();
    }
  };
}
