/** The API process: config, database, Temporal client, HTTP server; clean stop on SIGINT/SIGTERM. */
import { disconnectDatabase, pingDatabase } from '../db/connection';
import { pingTemporal } from '../temporal/client';
import { createApp } from './app';
import { bootProcess } from '../services/process';

/** How long requests already received get to be read before the listener closes. */
const READ_GRACE_MS = 250;

async function main() {
  const { config, logger, temporal, stopDomains } = await bootProcess('api');
  const app = createApp({
    config,
    logger,
    probes: [
      { name: 'database', check: pingDatabase },
      { name: 'temporal', check: () => pingTemporal(temporal) },
    ],
  });
  const server = app.listen(config.port, config.host, () => {
    logger.info({ url: `http://${config.host}:${config.port}` }, 'api listening');
  });
  // Graceful drain. Requests whose bytes have arrived are read first (a short grace: closing at
  // once would drop sockets accepted but not yet parsed, which Node counts as idle); then the
  // listener closes (new connections are refused from then on) and idle keep-alive connections
  // with it; requests in flight finish, at most DRAIN_TIMEOUT_MS; then the database and Temporal
  // are let go. Responses sent while draining carry `Connection: close`.
  let draining = false;
  server.on('request', (_req, res) => {
    if (draining) res.setHeader('Connection', 'close');
  });
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      draining = true;
      logger.info({ drainMs: config.drainTimeoutMs }, 'api stopping: draining requests in flight');
      await new Promise((resolve) => setTimeout(resolve, READ_GRACE_MS));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const timer = setTimeout(() => {
        logger.warn('api drain timed out: closing the remaining connections');
        server.closeAllConnections();
      }, config.drainTimeoutMs);
      await closed;
      clearTimeout(timer);
      await stopDomains().catch(() => undefined);
      await temporal.connection.close().catch(() => undefined);
      await disconnectDatabase().catch(() => undefined);
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
