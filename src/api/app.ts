/**
 * The Koa application: request metrics, error rendering, request logs, JSON bodies up to 1 MiB, public routes,
 * then token auth, per-token rate limit and idempotency in front of every resource router,
 * mounted at /v1 and /api/v1.
 */
import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Dependencies } from '../dependencies';
import { ApiError } from '../lib/errors';
import type { AppState, Ctx } from './context';
import { errorMiddleware } from './middleware/errors';
import { requestLog } from './middleware/requestLog';
import { authMiddleware } from './middleware/auth';
import { sharedTokenReader } from '../services/accounts';
import { rateLimit } from './middleware/rateLimit';
import { idempotency } from './middleware/idempotency';
import { healthRoutes, ReadinessProbe } from './health/routes';
import { authRoutes, meRoutes } from './auth/routes';
import { AuthThrottle } from './auth/throttle';
import { accountRoutes } from './accounts/routes';
import { customerRoutes } from './customers/routes';
import { productRoutes } from './products/routes';
import { priceRoutes } from './prices/routes';
import { walletRoutes } from './wallets/routes';
import { billingResources } from './domains/billing';
import { cryptoPages, cryptoPublicResources, cryptoResources } from './domains/crypto';
import { webhooksResources } from './domains/webhooks';
import { openapiRoutes } from './openapi/routes';
import { methodNotAllowed } from './openapi/methodNotAllowed';
import { docsPages } from './docs/routes';
import { consolePages } from './console/routes';
import { metricsRoutes } from './metrics/routes';
import { httpMetrics } from './middleware/metrics';
import { ApiMetrics, createApiMetrics, Limiter } from '../metrics/api';

/** What route modules are built with: the process's dependencies, and the limiters shared by the /v1 and /api/v1 mounts. */
export interface RouteDeps extends Dependencies {
  /** Per client IP: the public claim routes, and the pay page in a window of its own. */
  publicClaimLimit: ReturnType<typeof rateLimit>;
  payPageLimit: ReturnType<typeof rateLimit>;
  /** Sign-in throttling, shared by POST /v1/auth and the console's sign-in. */
  authThrottle: AuthThrottle;
}
export type RouteModule = (router: Router<AppState>, deps: RouteDeps) => void;

/** The process's dependencies (settings, logger, price oracle, workflow clients), and the app's own parts. */
export interface AppDeps extends Dependencies {
  probes?: ReadinessProbe[];
  /** Sign-in throttling (tests pass one with other limits or a clock); one per app by default. */
  authThrottle?: AuthThrottle;
  /** What GET /metrics serves; a fresh registry by default (one app per process in production). */
  metrics?: ApiMetrics;
}

const RESOURCES: RouteModule[] = [
  meRoutes, accountRoutes, customerRoutes, productRoutes, priceRoutes, walletRoutes,
  ...billingResources, ...cryptoResources, ...webhooksResources,
];
const PUBLIC_RESOURCES: RouteModule[] = [openapiRoutes, ...cryptoPublicResources];
const PAGES: RouteModule[] = [docsPages, consolePages, ...cryptoPages];

export function createApp(deps: AppDeps): Koa<AppState> {
  const { config, logger } = deps;
  const app = new Koa<AppState>();
  // Off, X-Forwarded-For is ignored (a client could choose its own address for the IP limiters). On,
  // only the last entry counts: the one our proxy appended; earlier ones are the client's to write.
  app.proxy = config.trustProxy;
  app.maxIpsCount = 1;

  const metrics = deps.metrics ?? createApiMetrics();
  // Outermost, so it sees the status the error middleware rendered.
  app.use(httpMetrics(metrics));
  app.use(errorMiddleware(logger, config.publicUrl));
  app.use(requestLog(logger, new Set(['/metrics'])));
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', jsonStrict: false, detectJSON: () => false }));

  // One for both mounts, so /v1/auth and /api/v1/auth share the counts.
  const authThrottle = deps.authThrottle ?? new AuthThrottle();
  const rejected = (limiter: Limiter) => metrics.rateLimitRejections.inc({ limiter });
  // One for both mounts: a client's concurrent requests share their token's read.
  const readToken = sharedTokenReader();
  const routeDeps: RouteDeps = {
    config,
    logger,
    priceOracle: deps.priceOracle,
    spotPrices: deps.spotPrices,
    temporal: deps.temporal,
    workflows: deps.workflows,
    inFlight: deps.inFlight,
    publicClaimLimit: rateLimit(config.publicRateLimitPerMinute, (ctx) => `public-claims:${ctx.ip}`, () => rejected('public_claims')),
    payPageLimit: rateLimit(config.publicRateLimitPerMinute, (ctx) => `pay-page:${ctx.ip}`, () => rejected('pay_page')),
    authThrottle,
  };

  const root = new Router<AppState>();
  healthRoutes(root, deps.probes ?? [], logger);
  metricsRoutes(root, metrics);
  for (const page of PAGES) page(root, routeDeps);
  app.use(root.routes());

  for (const prefix of ['/v1', '/api/v1']) {
    const open = new Router<AppState>({ prefix });
    authRoutes(open, authThrottle, rejected);
    for (const r of PUBLIC_RESOURCES) r(open, routeDeps);
    app.use(open.routes());

    const api = new Router<AppState>({ prefix });
    api.use(authMiddleware(readToken));
    api.use(rateLimit(config.rateLimitPerMinute, (ctx) => ctx.state.auth!.tokenHash, () => rejected('per_token')));
    api.use(idempotency(config.publicUrl));
    for (const r of RESOURCES) r(api, routeDeps);
    app.use(api.routes());
  }

  app.use(methodNotAllowed);
  app.use((ctx: Ctx) => {
    throw ApiError.notFound(`Unrecognized request URL (${ctx.method} ${ctx.path})`);
  });
  return app;
}
