/**
 * The Koa application: request metrics, error rendering, request logs, JSON bodies up to 1 MiB, public routes,
 * then token auth, the per-account rate limit and idempotency in front of every resource router,
 * mounted at /v1 and /api/v1.
 */
import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Dependencies } from '../dependencies';
import { ApiError } from '../lib/errors';
import { AppState, Ctx, scopeOf } from './context';
import { scopeKey } from '../models/scope';
import { errorMiddleware } from './middleware/errors';
import { requestLog } from './middleware/requestLog';
import { authMiddleware } from './middleware/auth';
import { sharedTokenReader } from '../services/accounts/accounts';
import { CounterStore, memoryCounters, rateLimit } from './middleware/rateLimit';
import { clientAddress, clientKey, proxyMatcher } from '../lib/network';
import { idempotency } from './middleware/idempotency';
import { healthRoutes, ReadinessProbe } from './health/routes';
import { authRoutes, meRoutes, SignInGuard } from './auth/routes';
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
import { closeAfterUnreadBody } from './middleware/unreadBody';
import { ApiMetrics, createApiMetrics, Limiter } from '../metrics/api';
import type { RouteDeps, RouteModule } from './routeDeps';


/** The process's dependencies (settings, logger, price oracle, workflow clients), and the app's own parts. */
export interface AppDeps extends Dependencies {
  probes?: ReadinessProbe[];
  /** Sign-in throttling (tests pass one with other limits or a clock); one per app by default. */
  authThrottle?: AuthThrottle;
  /** What GET /metrics serves; a fresh registry by default (one app per process in production). */
  metrics?: ApiMetrics;
  /** Where the rate limits count: this process's memory by default. */
  counters?: CounterStore;
  /** The console sessions' clock (tests pass their own); the system clock by default. */
  consoleClock?: () => Date;
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
  // X-Forwarded-* are believed only with a proxy named in TRUST_PROXY; the client address is ours to
  // work out (first middleware below): Koa's would take an entry the client wrote, from any peer.
  app.proxy = config.trustProxy.length > 0;
  const trusted = proxyMatcher(config.trustProxy);
  app.use((ctx: Ctx, next) => {
    ctx.request.ip = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For'), trusted);
    return next();
  });

  const metrics = deps.metrics ?? createApiMetrics();
  app.use(closeAfterUnreadBody());
  // Outermost, so it sees the status the error middleware rendered.
  app.use(httpMetrics(metrics));
  app.use(errorMiddleware(logger, config.publicUrl));
  app.use(requestLog(logger, new Set(['/metrics'])));
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', jsonStrict: false, detectJSON: () => false }));

  const rejected = (limiter: Limiter) => metrics.rateLimitRejections.inc({ limiter });
  // One of each for both mounts (and the console), so /v1 and /api/v1 share the counts.
  const signIn: SignInGuard = { throttle: deps.authThrottle ?? new AuthThrottle(), onReject: rejected };
  const counters = deps.counters ?? memoryCounters();
  // Per account and scope, whichever of its tokens and mounts: a new token (POST /v1/auth) gets no fresh window.
  const perAccount = rateLimit(counters('per-account', config.rateLimitPerMinute), (ctx) => scopeKey(scopeOf(ctx)), () => rejected('per_account'));
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
    keys: deps.keys,
    publicClaimLimit: rateLimit(counters('public-claims', config.publicRateLimitPerMinute), (ctx) => clientKey(ctx.ip), () => rejected('public_claims')),
    payPageLimit: rateLimit(counters('pay-page', config.publicRateLimitPerMinute), (ctx) => clientKey(ctx.ip), () => rejected('pay_page')),
    signIn,
    consoleClock: deps.consoleClock ?? (() => new Date()),
  };

  const root = new Router<AppState>();
  healthRoutes(root, deps.probes ?? [], logger);
  metricsRoutes(root, metrics, config.metricsToken);
  for (const page of PAGES) page(root, routeDeps);
  app.use(root.routes());

  for (const prefix of ['/v1', '/api/v1']) {
    const open = new Router<AppState>({ prefix });
    authRoutes(open, signIn);
    for (const r of PUBLIC_RESOURCES) r(open, routeDeps);
    app.use(open.routes());

    const api = new Router<AppState>({ prefix });
    api.use(authMiddleware(readToken));
    api.use(perAccount);
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
