/** The Temporal worker process: runs every workflow and activity on the task queue. */
import { NativeConnection, Worker } from '@temporalio/worker';
import { disconnectDatabase } from './src/db/connection';
import { createActivities } from './src/activities';
import { bootProcess } from './src/services/process';
import { ensureChainWatchers } from './src/services/chainWatcher';

async function main() {
  // Activities record events and may start workflows (webhook deliveries), so the worker
  // process wires the domains with a client too.
  const { config, logger, temporal, stopDomains } = await bootProcess('worker');
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
  const running = worker.run();
  // On-chain detection runs where there is a worker to run it.
  logger.info({ currencies: await ensureChainWatchers(config) }, 'chain watchers');
  await running;
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
