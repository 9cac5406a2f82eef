/** The API process: config, database, Temporal client, HTTP server; clean stop on SIGINT/SIGTERM. */
import { disconnectDatabase, pingDatabase } from '../db/connection';
import { pingTemporal } from '../temporal/client';
import { createApp } from './app';
import { bootProcess } from '../startup/process';
import { configWarnings } from '../config';
import { httpServer } from './httpServer';
import { createApiMetrics } from '../metrics/api';
import { redisCounters } from './middleware/rateLimit';
import { Redis } from 'ioredis';
import { AUTH_LIMITS, AuthThrottle } from './auth/throttle';
import { memoryThrottleStore, redisThrottleStore, withFallback } from './auth/throttleStore';

/**
 * The rate limits' Redis client: no queue while disconnected and at most 500 ms per command, so a
 * Redis that is down or stuck costs a request at most that before its hit is counted in memory.
 */
const REDIS_OPTIONS = { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 };

/** How long no request must be in flight before the listener closes. */
const QUIET_MS = 300;

async function main() {
  const { deps, config, logger, temporal, stopDomains } = await bootProcess('api');
  for (const warning of configWarnings(config)) logger.warn(warning);
  const metrics = createApiMetrics();
  // The rate limits count in Redis when REDIS_URL is set (shared by every API process), else in this process's memory.
  const redis = config.redisUrl ? new Redis(config.redisUrl, REDIS_OPTIONS) : null;
  let lastFailureLog = 0;
  redis?.on('error', () => undefined); // each failed call is reported below; ioredis reconnects by itself
  const storeFailed = (what: string) => (err: unknown) => {
    metrics.counterStoreFailures.inc({ store: what });
    if (Date.now() - lastFailureLog < 10_000) return;
    lastFailureLog = Date.now();
    logger.error({ err, store: what }, 'shared counter store (Redis) failed: counting in this process until it is back');
  };
  const counters = redis ? redisCounters(redis, storeFailed('rate_limits')) : undefined;
  // The sign-in throttle's counts too; its queue of checks stays per process (CPU protection).
  const authThrottle = redis
    ? new AuthThrottle(AUTH_LIMITS, Date.now, undefined, withFallback(redisThrottleStore(redis, AUTH_LIMITS.forgetAfterMs), memoryThrottleStore(AUTH_LIMITS.forgetAfterMs), storeFailed('sign_in')))
    : undefined;
  const app = createApp({
    ...deps,
    metrics,
    counters,
    authThrottle,
    probes: [
      { name: 'database', check: pingDatabase },
      { name: 'temporal', check: () => pingTemporal(temporal) },
    ],
  });
  const server = httpServer(app, config).listen(config.port, config.host, () => {
    logger.info({ url: `http://${config.host}:${config.port}` }, 'api listening');
  });
  // Graceful drain: requests keep being served (responses carry `Connection: close`) until none
  // has been in flight for QUIET_MS, at most DRAIN_TIMEOUT_MS; then the listener closes (new
  // connections are refused from then on) with the idle keep-alive connections, and the database
  // and Temporal are let go. Closing the listener at once would also drop sockets accepted but not
  // yet read (Node counts them idle): under load that reset half of 60 requests sent just before.
  let draining = false;
  let inFlight = 0;
  server.on('request', (_req, res) => {
    inFlight += 1;
    res.once('close', () => {
      inFlight -= 1;
    });
    if (draining) res.setHeader('Connection', 'close');
  });
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      draining = true;
      logger.info({ drainMs: config.drainTimeoutMs }, 'api stopping: draining requests in flight');
      const deadline = Date.now() + config.drainTimeoutMs;
      let quietSince = Date.now();
      while (Date.now() < deadline) {
        if (inFlight > 0) quietSince = Date.now();
        else if (Date.now() - quietSince >= QUIET_MS) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (inFlight > 0) logger.warn({ inFlight }, 'api drain timed out: closing the remaining connections');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await stopDomains().catch(() => undefined);
      await temporal.connection.close().catch(() => undefined);
      await disconnectDatabase().catch(() => undefined);
      redis?.disconnect();
      logger.info('api stopped');
      process.exit(0);
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
