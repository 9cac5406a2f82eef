/**
 * The real worker process (`worker.ts`) against the dev server `npm test` runs: with
 * WORKER_METRICS_PORT=0 it logs the port it got, its /metrics carries the domain metrics and
 * the Temporal SDK's own (relayed from the SDK's exporter on loopback) once a workflow ran,
 * and SIGTERM stops it cleanly, metrics server included.
 */
import path from 'node:path';
import { grpcConnectionOptions } from '../../src/temporal/client';
import { spawn, ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { useTestDatabase } from '../support/db';
import { devServerAddress } from '../support/temporal';
import { waitFor } from '../support/wait';
import { samplesOf, scrape, valueOf } from './prom';

const db = useTestDatabase();
const root = path.join(__dirname, '..', '..');
const taskQueue = `metrics-worker-${process.pid}-${Date.now()}`;

type LogLine = { msg?: string; port?: number; [k: string]: unknown };
const logs: LogLine[] = [];
let child: ChildProcess | null = null;
let exited: Promise<number | null>;
let connection: Connection | null = null;

afterAll(async () => {
  await connection?.close();
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
});

const logged = (msg: string) => logs.find((l) => l.msg === msg);

describe('the worker process', () => {
  it('serves domain and Temporal SDK metrics on one port, and closes it on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MONGODB_URI: db.uri(),
      TEMPORAL_ADDRESS: devServerAddress(),
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      // Without METRICS_TOKEN the metrics listen on loopback only, whatever HOST says.
      HOST: '0.0.0.0',
      WORKER_METRICS_PORT: '0',
      TEMPORAL_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    };
    // No chain watchers: this worker only needs to run one workflow.
    for (const k of ['ETH_RPC_URL', 'BTC_ESPLORA_URL', 'METRICS_TOKEN', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'ALLOW_UNSAFE_LOCAL_SETTINGS']) delete env[k];
    const proc = spawn(process.execPath, ['--import', 'tsx', 'worker.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
    let stderr = '';
    proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    let pending = '';
    proc.stdout!.on('data', (c: Buffer) => {
      pending += c.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        try {
          logs.push(JSON.parse(line));
        } catch {
          // not a log line
        }
      }
    });

    await waitFor(() => proc.exitCode !== null || !!logged('worker running'), 'the worker to start', 90_000);
    if (proc.exitCode !== null) throw new Error(`worker exited with ${proc.exitCode}: ${stderr}`);
    const port = logged('worker metrics at /metrics')?.port;
    expect(port).toEqual(expect.any(Number));
    expect(port).toBeGreaterThan(0);
    expect(logged('worker metrics at /metrics')?.host).toBe('127.0.0.1');
    const url = `http://127.0.0.1:${port}/metrics`;

    // One workflow with one activity on this worker's queue.
    connection = await Connection.connect(grpcConnectionOptions({ address: devServerAddress() }));
    const client = new Client({ connection, namespace: 'default' });
    const result = await client.workflow.execute('webhookRetentionWorkflow', { taskQueue, workflowId: `${taskQueue}-retention`, args: [] });
    expect(result).toEqual({ events: 0, deliveries: 0, idempotencyKeys: 0 });

    const ours = { task_queue: taskQueue };
    const metrics = await waitFor(
      async () => {
        const { samples } = await scrape(url);
        return samplesOf(samples, 'temporal_workflow_completed', { ...ours, workflow_type: 'webhookRetentionWorkflow' }).length > 0 ? samples : null;
      },
      'the SDK to report the completed workflow',
      30_000,
    );
    const sum = (name: string, labels: Record<string, string>) => samplesOf(metrics, name, labels).reduce((s, x) => s + x.value, 0);
    expect(sum('temporal_workflow_completed', { ...ours, workflow_type: 'webhookRetentionWorkflow' })).toBe(1);
    expect(sum('temporal_activity_execution_latency_count', { ...ours, activity_type: 'purgeExpiredRecords' })).toBe(1);
    expect(sum('temporal_worker_start', ours)).toBeGreaterThanOrEqual(1);
    // The domain metrics in the same answer (the database of this test holds no event).
    expect(valueOf(metrics, 'payments_oldest_undispatched_event_age_seconds')).toBe(0);
    expect(valueOf(metrics, 'payments_webhook_delivery_attempts_total', { outcome: 'success' })).toBe(0);
    expect(metrics.filter((s) => s.name.startsWith('temporal_')).length).toBeGreaterThan(10);

    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(logged('worker stopped')).toBeDefined();
    await expect(fetch(url)).rejects.toThrow();
  });

  it('refuses WEBHOOK_ALLOW_PRIVATE_NETWORKS=true without ALLOW_UNSAFE_LOCAL_SETTINGS=true, even on a loopback HOST', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, MONGODB_URI: db.uri(), HOST: '127.0.0.1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    delete env.ALLOW_UNSAFE_LOCAL_SETTINGS;
    const proc = spawn(process.execPath, ['--import', 'tsx', 'worker.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/WEBHOOK_ALLOW_PRIVATE_NETWORKS=true is for local runs only.*ALLOW_UNSAFE_LOCAL_SETTINGS=true/);
  }, 60_000);
});
