/** The API process: config, database, Temporal client, HTTP server; clean stop on SIGINT/SIGTERM. */
import { disconnectDatabase, pingDatabase } from '../db/connection';
import { pingTemporal } from '../temporal/client';
import { createApp } from './app';
import { bootProcess } from '../services/process';

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
  const stop = async () => {
    logger.info('api stopping');
    server.close();
    await stopDomains().catch(() => undefined);
    await temporal.connection.close().catch(() => undefined);
    await disconnectDatabase().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
