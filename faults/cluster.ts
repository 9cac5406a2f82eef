/**
 * The real Temporal server for the cluster-* scenarios: its four services (frontend, history,
 * matching, worker) as processes of this suite, each started by scripts/temporal-cluster.sh's
 * exec_temporal_cluster_service (the same command `npm run start:cluster` runs, in place of a
 * shell, so a kill -9 hits the server itself) so that a scenario can kill one and start it again.
 * scripts/faults.sh made the certificates, ports, databases and config (prepare_temporal_cluster)
 * and passes FAULTS_CLUSTER_PORT, FAULTS_CLUSTER_DIR and FAULTS_CLUSTER_CERTS; the namespace and
 * search attributes are made by await_temporal_cluster once the services run.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess, ROOT, tail } from './stack';
import { isPortOpen } from './servers';

export const CLUSTER_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ClusterService = (typeof CLUSTER_SERVICES)[number];

export interface TemporalCluster {
  services: Record<ClusterService, ManagedProcess>;
  /** The frontend, 127.0.0.1:<port>. */
  address: string;
  /** The client settings the API and the worker read (mutual TLS). */
  env: Record<string, string>;
  /** Starts every service that is not running, then waits for the namespace (first time: creates it). */
  start: () => Promise<void>;
  stop: () => Promise<void>;
}

const sourced = `source "${join(ROOT, 'scripts/lib.sh')}" && source "${join(ROOT, 'scripts/temporal-cluster.sh')}"`;

function bash(script: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', `${sourced} && ${script}`, 'bash', ...args], { cwd: ROOT, env: process.env, maxBuffer: 1 << 20 }, (err, _out, stderr) =>
      err ? reject(new Error(`${script} failed: ${stderr.trim().split('\n').slice(-5).join(' | ')}`)) : resolve(),
    );
  });
}

export function temporalCluster(runDir: string): TemporalCluster {
  const port = process.env.FAULTS_CLUSTER_PORT;
  const dir = process.env.FAULTS_CLUSTER_DIR;
  const certs = process.env.FAULTS_CLUSTER_CERTS;
  if (!port || !dir || !certs) throw new Error('no Temporal cluster prepared (run the cluster scenarios through npm run faults, with PostgreSQL)');
  // The services' own gRPC ports, as prepare_temporal_cluster picked them (ports.env).
  const ports = Object.fromEntries(
    readFileSync(join(dir, 'ports.env'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => l.split('=') as [string, string]),
  );
  const grpc: Record<ClusterService, number> = {
    frontend: Number(port),
    history: Number(ports.TC_HISTORY_GRPC),
    matching: Number(ports.TC_MATCHING_GRPC),
    worker: Number(ports.TC_WORKER_GRPC),
  };
  const services = Object.fromEntries(
    CLUSTER_SERVICES.map((svc) => [
      svc,
      new ManagedProcess({
        name: `temporal-${svc}`,
        command: 'bash',
        args: ['-c', `${sourced} && exec_temporal_cluster_service "$1" "$2"`, 'bash', svc, dir],
        env: process.env,
        log: join(runDir, `temporal-${svc}.log`),
        // The worker service serves once the frontend does (await_temporal_cluster checks it all).
        ready: svc === 'worker' ? async () => true : () => isPortOpen(grpc[svc]),
      }),
    ]),
  ) as Record<ClusterService, ManagedProcess>;
  const env = {
    TEMPORAL_TLS_CERT: join(certs, 'client.pem'),
    TEMPORAL_TLS_KEY: join(certs, 'client.key'),
    TEMPORAL_TLS_CA: join(certs, 'ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'localhost',
  };
  return {
    services,
    address: `127.0.0.1:${port}`,
    env,
    start: async () => {
      for (const svc of CLUSTER_SERVICES) if (!services[svc].running) await services[svc].start();
      await bash('await_temporal_cluster "$1" "$2"', [port, runDir]).catch((err: Error) => {
        throw new Error(`${err.message}\n${CLUSTER_SERVICES.map((s) => `${s}: ${tail(services[s].spec.log, 5)}`).join('\n')}`);
      });
    },
    stop: async () => {
      // The frontend first (no new calls), history last (it owns the shards).
      for (const svc of ['frontend', 'worker', 'matching', 'history'] as const) await services[svc].stop('SIGTERM');
    },
  };
}
