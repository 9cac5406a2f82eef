/**
 * API_PROCESSES > 1 on Node: a small primary that forks that many API processes (src/api/server.ts)
 * sharing PORT through Node's cluster module, restarts one that dies (1, 2, 4 ... 30 s; the count
 * starts afresh after a minute of running) and, on SIGTERM/SIGINT, passes the signal on so each
 * drains as a single API does, then exits once they all have. Node only (Deno has no cluster
 * module: docs/running.md, "Several API processes and workers"); scripts/start.sh runs it instead of server.ts.
 */
import type { Cluster, Worker } from 'node:cluster';
import { projectPath } from '../lib/projectRoot';

export interface ClusterDeps {
  cluster: Cluster;
  processes: number;
  /** The entry each worker runs. */
  exec: string;
  log: (message: string) => void;
  setTimeout: (fn: () => void, ms: number) => unknown;
  now: () => number;
  exit: (code: number) => void;
  onSignal: (signal: 'SIGTERM' | 'SIGINT', fn: () => void) => void;
}

const STABLE_MS = 60_000;
const MAX_DELAY_MS = 30_000;

export function runCluster(d: ClusterDeps): void {
  d.cluster.setupPrimary({ exec: d.exec });
  let stopping = false;
  // Per slot: consecutive early deaths, and when its current process started.
  const fails: number[] = Array(d.processes).fill(0);
  const started: number[] = Array(d.processes).fill(0);
  const slotOf = new Map<Worker, number>();

  const fork = (slot: number) => {
    if (stopping) return;
    started[slot] = d.now();
    const worker = d.cluster.fork({ API_PROCESS_SLOT: String(slot + 1) });
    slotOf.set(worker, slot);
  };

  d.cluster.on('exit', (worker, code, signal) => {
    const slot = slotOf.get(worker);
    slotOf.delete(worker);
    if (stopping) {
      if (slotOf.size === 0) {
        d.log('api cluster stopped');
        d.exit(0);
      }
      return;
    }
    if (slot === undefined) return;
    if (d.now() - started[slot] >= STABLE_MS) fails[slot] = 0;
    fails[slot] += 1;
    const delay = Math.min(1000 * 2 ** (fails[slot] - 1), MAX_DELAY_MS);
    d.log(`api process ${worker.process.pid} exited (${signal ?? `status ${code}`}); starting another in ${delay / 1000}s`);
    d.setTimeout(() => fork(slot), delay);
  });

  const stop = (signal: 'SIGTERM' | 'SIGINT') => () => {
    if (stopping) return;
    stopping = true;
    d.log(`api cluster stopping (${signal}): each process drains`);
    if (slotOf.size === 0) d.exit(0);
    for (const worker of slotOf.keys()) worker.process.kill(signal);
  };
  d.onSignal('SIGTERM', stop('SIGTERM'));
  d.onSignal('SIGINT', stop('SIGINT'));

  for (let slot = 0; slot < d.processes; slot++) fork(slot);
  d.log(`api cluster: ${d.processes} processes on one port`);
}

/** Run as the entry point (`node --import tsx src/api/cluster.ts`). */
export async function main(): Promise<void> {
  const { default: cluster } = await import('node:cluster');
  const { loadConfig } = await import('../config');
  const config = loadConfig(process.env, 'api');
  runCluster({
    cluster,
    processes: config.apiProcesses,
    exec: projectPath('src', 'api', 'server.ts'),
    log: (message) => console.log(JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, msg: message })),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    now: () => Date.now(),
    exit: (code) => process.exit(code),
    onSignal: (signal, fn) => process.on(signal, fn),
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
