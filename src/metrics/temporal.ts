import { Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import { freePort } from './server';

/**
 * Installs the Temporal SDK runtime with its Prometheus exporter on loopback (0: a free port)
 * and returns the exporter's URL. Must run before the first NativeConnection, which would
 * create the runtime without it. A port in use is logged, not fatal: the worker still runs
 * payments, without the SDK's metrics.
 */
export async function installTemporalRuntime(port: number, logger: Logger): Promise<string | null> {
  const bindAddress = `127.0.0.1:${port === 0 ? await freePort('127.0.0.1') : port}`;
  try {
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
  } catch (err) {
    logger.error({ err, bindAddress }, 'Temporal SDK metrics are not exported (TEMPORAL_METRICS_PORT)');
    return null;
  }
  return `http://${bindAddress}/metrics`;
}
