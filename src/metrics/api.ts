/**
 * The API process's metrics, built once per app on a registry of its own (never prom-client's
 * global one, so each test app counts only its own requests) and passed in through AppDeps.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Who refused a request: the per-account limit, the per-IP windows, or sign-in throttling (locked/over budget, or too many checks at once). */
export const LIMITERS = ['per_account', 'public_claims', 'pay_page', 'sign_in', 'sign_in_busy'] as const;
export type Limiter = (typeof LIMITERS)[number];

/** The label of a request no route matched: the raw path is never a label (it may hold a link secret). */
export const UNMATCHED_ROUTE = 'unmatched';

export function createApiMetrics(register: Registry = new Registry()) {
  collectDefaultMetrics({ register });
  const labelNames = ['method', 'route', 'status'] as const;
  const metrics = {
    register,
    httpRequests: new Counter({
      name: 'payments_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code',
      labelNames,
      registers: [register],
    }),
    httpDuration: new Histogram({
      name: 'payments_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route template and status code',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [register],
    }),
    httpInFlight: new Gauge({
      name: 'payments_http_requests_in_flight',
      help: 'HTTP requests being answered now',
      registers: [register],
    }),
    rateLimitRejections: new Counter({
      name: 'payments_rate_limit_rejections_total',
      help: 'Requests refused by a rate limiter (429, or 503 for sign_in_busy), by limiter',
      labelNames: ['limiter'] as const,
      registers: [register],
    }),
    counterStoreFailures: new Counter({
      name: 'payments_counter_store_failures_total',
      help: 'Calls to the shared counter store (Redis) that failed and were counted in the process memory instead, by store (rate_limits, sign_in)',
      labelNames: ['store'] as const,
      registers: [register],
    }),
  };
  // Every limiter shows from the start at 0, so rate() and alerts see the first rejection.
  for (const limiter of LIMITERS) metrics.rateLimitRejections.inc({ limiter }, 0);
  return metrics;
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;
