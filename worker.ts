/** The Temporal worker process: runs every workflow and activity on the task queue. */
import { Worker } from '@temporalio/worker';
import { disconnectDatabase } from './src/db/connection';
import { createActivities } from './src/activities';
import { bootProcess } from './src/startup/process';
import { ensureChainWatchers } from './src/services/crypto/chainWatcher';
import { oldestUndispatchedEventAt } from './src/services/webhooks/webhookSweeper';
import { createWorkerMetrics } from './src/metrics/worker';
import { MetricsServer, metricsHost, startMetricsServer } from './src/metrics/server';
import { installTemporalRuntime } from './src/metrics/temporal';
import { projectPath } from './src/lib/projectRoot';
import { workerCapacity } from './src/startup/workerOptions';
import { workerConnection } from './src/temporal/client';
import { backfillInvoicePaidAt } from './src/services/billing/invoicePaidAt';

async function main() {
  // Signals are taken from the first line: one that arrives while the process is still starting
  // (a supervisor stopping a worker it has just restarted) stops it cleanly once it has started,
  // instead of killing it halfway through its connections. Ctrl-C twice asks once.
  let worker: Worker | null = null;
  let stopRequested = false;
  const stop = () => {
    stopRequested = true;
    if (worker?.getState() === 'RUNNING') worker.shutdown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Activities record events and may start workflows (webhook deliveries), so the worker
  // process wires the domains with a client too.
  let temporalMetricsUrl: string | null = null;
  const { deps, config, logger, temporal, stopDomains } = await bootProcess('worker', {
    // Before the first NativeConnection, which would create the SDK's runtime without metrics.
    beforeTemporal: async (config, logger) => {
      temporalMetricsUrl = await installTemporalRuntime(config.temporalMetricsPort, logger);
    },
  });
  const metrics = createWorkerMetrics({ oldestUndispatchedEventAt, logger });
  // One scrape target: the domain metrics and, relayed from loopback, the SDK's. A port in use
  // is logged, not fatal: payments matter more than their metrics.
  let metricsServer: MetricsServer | null = null;
  const host = metricsHost(config.host, config.metricsToken);
  try {
    metricsServer = await startMetricsServer({ register: metrics.register, host, port: config.workerMetricsPort, token: config.metricsToken, temporalMetricsUrl, logger });
    logger.info({ host, port: metricsServer.port, token: config.metricsToken !== null }, 'worker metrics at /metrics');
  } catch (err) {
    logger.error({ err, port: config.workerMetricsPort }, 'worker metrics not served (WORKER_METRICS_PORT)');
  }
  const polling = await workerConnection(temporal, config.temporal);
  worker = await Worker.create({
    connection: polling.connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    // A folder, found the same way on Node and Deno: the SDK's bundler resolves its index as
    // require.resolve('./src/workflows') did.
    workflowsPath: projectPath('src', 'workflows'),
    activities: createActivities({ ...deps, metrics }),
    ...workerCapacity(config),
  });
  // Run even when a stop came during start-up: the SDK shuts down only a running worker.
  logger.info({ taskQueue: config.temporal.taskQueue }, 'worker running');
  const running = worker.run();
  if (stopRequested) worker.shutdown();
  // On-chain detection runs where there is a worker to run it.
  else logger.info({ currencies: await ensureChainWatchers(deps) }, 'chain watchers');
  // Invoices paid before `paid_at` was written get it once, beside the work: there may be many,
  // and nothing waits on them. Stopped with the worker; the next start finishes what is left.
  const stopBackfill = new AbortController();
  const paidAt = backfillInvoicePaidAt(deps, stopBackfill.signal).then(
    (invoices) => invoices > 0 && logger.info({ invoices }, 'paid_at written on invoices paid before it existed'),
    (err) => logger.warn({ err }, 'paid_at backfill failed; the next start tries again'),
  );
  await running;
  stopBackfill.abort();
  await paidAt;
  await metricsServer?.close();
  await stopDomains();
  await polling.close();
  await temporal.connection.close();
  await disconnectDatabase();
  logger.info('worker stopped');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
