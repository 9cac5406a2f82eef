/**
 * Start-up shared by the API and worker processes: configuration (a bad value stops the
 * process with a message), logger, database, Temporal client, the dependencies built from them,
 * and the domains wired to it.
 */
import { loadConfig, ConfigError, Config, isDeno, ProcessRole } from '../config';
import type { Logger } from 'pino';
import { createLogger } from '../lib/logger';
import { connectDatabase } from '../db/connection';
import { clientTransportOf, connectTemporal, TemporalHandle } from '../temporal/client';
import { createDependencies } from '../dependencies';
import { startDomains } from './runtime';
import { backfillListedCollections } from '../services/writes/listedCollections';

export function loadConfigOrExit(role: ProcessRole): Config {
  try {
    return loadConfig(process.env, role);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * `beforeTemporal` runs once config and logger exist, before the Temporal client connects: the
 * worker installs the SDK's runtime there, as that must precede the first NativeConnection (the
 * client's own, where TEMPORAL_CLIENT_TRANSPORT is native, as under Deno).
 */
export async function bootProcess(name: 'api' | 'worker', opts: { beforeTemporal?: (config: Config, logger: Logger) => Promise<void> } = {}) {
  const config = loadConfigOrExit(name);
  const logger = createLogger(config.logLevel, name);
  await opts.beforeTemporal?.(config, logger);
  await connectDatabase(config.mongodbUri, { unavailableTimeoutMs: config.dbUnavailableTimeoutMs });
  // Documents written before bucketed lists get their list slots (once; then one read per collection).
  await backfillListedCollections();
  const clientTransport = clientTransportOf(config.temporal.clientTransport, { role: name, deno: isDeno() });
  const temporal: TemporalHandle = await connectTemporal({ ...config.temporal, clientTransport });
  // Search attributes are registered by the scripts that start the server (npm start, compose).
  const deps = createDependencies({
    config,
    logger,
    // worker.ts runs its worker on the client's connection when it is native: starts may be eager.
    temporal: { client: temporal.client, taskQueue: temporal.taskQueue, searchAttributes: true, eagerStart: name === 'worker' && clientTransport === 'native' },
    // The worker's starts come from activities, which Temporal retries: no outbox needed there.
    workflowStarts: name === 'worker' ? 'direct' : 'outbox',
  });
  const stopDomains = await startDomains(deps);
  return { deps, config, logger, temporal, stopDomains };
}
