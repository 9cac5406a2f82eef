/** The API process: config, database, Temporal client, HTTP server; clean stop on SIGINT/SIGTERM. */
import { loadConfig, ConfigError } from '../config';
import { createLogger } from '../lib/logger';
import { connectDatabase, disconnectDatabase, pingDatabase } from '../db/connection';
import { connectTemporal, pingTemporal } from '../temporal/client';
import { createApp } from './app';
import { startDomains } from '../services/runtime';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, 'api');
  await connectDatabase(config.mongodbUri);
  const temporal = await connectTemporal(config.temporal);
  const stopDomains = await startDomains({ config, logger, temporal: { client: temporal.client, taskQueue: temporal.taskQueue, searchAttributes: true } });
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
