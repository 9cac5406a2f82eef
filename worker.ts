/** The Temporal worker process: runs every workflow and activity on the task queue. */
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig, ConfigError } from './src/config';
import { createLogger } from './src/lib/logger';
import { connectDatabase, disconnectDatabase } from './src/db/connection';
import { createActivities } from './src/activities';
import { connectTemporal } from './src/temporal/client';
import { startDomains } from './src/services/runtime';

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
  const logger = createLogger(config.logLevel, 'worker');
  await connectDatabase(config.mongodbUri);
  // Activities record events and may start workflows (webhook deliveries), so the worker
  // process wires the domains with a client too.
  const temporal = await connectTemporal(config.temporal);
  const stopDomains = await startDomains({ config, logger, temporal: { client: temporal.client, taskQueue: temporal.taskQueue, searchAttributes: true } });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    workflowsPath: require.resolve('./src/workflows'),
    activities: createActivities({ config, logger }),
  });
  const stop = () => worker.shutdown();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  logger.info({ taskQueue: config.temporal.taskQueue }, 'worker running');
  await worker.run();
  await stopDomains();
  await connection.close();
  await temporal.connection.close();
  await disconnectDatabase();
  logger.info('worker stopped');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
