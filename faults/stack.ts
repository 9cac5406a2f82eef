/**
 * The processes a fault scenario kills and restarts, run exactly as `npm start` runs them
 * (`node --import tsx worker.ts`, `node --import tsx src/api/server.ts`, the FerretDB and
 * Temporal dev server binaries), each with its own log file.
 */
import { spawn, ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it is true; throws with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
  log: string;
  /** True once the process serves (a port answers, a log line appeared); `starts` counts this start. */
  ready: (starts: number) => Promise<boolean>;
  readyTimeoutMs?: number;
}

/** One supervised-by-the-scenario process: start, kill (any signal), start again. */
export class ManagedProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<number | null> = Promise.resolve(null);
  /** How many times it was started. */
  starts = 0;

  constructor(readonly spec: ProcessSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    const fd = openSync(this.spec.log, 'a');
    const child = spawn(this.spec.command, this.spec.args, { cwd: ROOT, env: this.spec.env as NodeJS.ProcessEnv, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.child = child;
    this.starts += 1;
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const timeout = this.spec.readyTimeoutMs ?? 120_000;
    const deadline = Date.now() + timeout;
    while (!(await this.spec.ready(this.starts).catch(() => false))) {
      if (!this.running) throw new Error(`${this.spec.name} exited while starting; log ${this.spec.log}:\n${tail(this.spec.log)}`);
      if (Date.now() > deadline) throw new Error(`${this.spec.name} not ready within ${timeout} ms; log ${this.spec.log}:\n${tail(this.spec.log)}`);
      await sleep(200);
    }
  }

  /** Sends `signal` and waits for the exit; the exit code (null when killed by the signal). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<number | null> {
    if (!this.running) return this.exited;
    this.child!.kill(signal);
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  kill9(): Promise<number | null> {
    return this.stop('SIGKILL');
  }
}

export function tail(file: string, lines = 25): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await res.arrayBuffer();
  return res.ok;
}

export function logContains(file: string, text: string): boolean {
  try {
    return readFileSync(file, 'utf8').includes(text);
  } catch {
    return false;
  }
}

/** Which runtime runs the API and the worker (README, "Runtimes"). */
export type Runtime = 'node' | 'deno';

/** The binary the pinned `deno` npm package ships (its own lookup, as scripts/lib.sh deno_bin). */
export function denoBinary(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(join(ROOT, 'node_modules', 'deno', 'install_api.cjs')) as { runInstall(): string }).runInstall();
}

/** Command and arguments that run a TypeScript entry file on `runtime`, as `npm start` does (scripts/lib.sh set_runtime_cmd). */
export function entryCommand(runtime: Runtime, entry: string): { command: string; args: string[] } {
  if (runtime === 'deno') return { command: denoBinary(), args: ['run', '-A', '--unstable-sloppy-imports', entry] };
  return { command: process.execPath, args: ['--import', 'tsx', entry] };
}

export interface AppEnv {
  /** node (the default) or deno. */
  runtime?: Runtime;
  mongodbUri: string;
  temporalAddress: string;
  taskQueue: string;
  runDir: string;
  extraEnv?: Record<string, string>;
}

/** The API and the worker of one scenario: their own database and task queue on the shared servers. */
export async function appProcesses(opts: AppEnv): Promise<{ api: ManagedProcess; worker: ManagedProcess; apiUrl: string }> {
  const set = await appProcessSet(opts, { apis: 1, workers: 1 });
  return { api: set.apis[0], worker: set.workers[0], apiUrl: set.apiUrls[0] };
}

/**
 * `apis` API processes (each on a port of its own, as behind a balancer) and `workers` worker
 * processes on one database and task queue. Logs: api-<queue>.log, worker-<queue>.log for the
 * first of each, then api2-, worker2- ...
 */
export async function appProcessSet(opts: AppEnv, counts: { apis: number; workers: number }): Promise<{ apis: ManagedProcess[]; workers: ManagedProcess[]; apiUrls: string[] }> {
  const runtime = opts.runtime ?? 'node';
  const ports: number[] = [];
  while (ports.length < counts.apis) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const envFor = (port: number): Record<string, string | undefined> => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      MONGODB_URI: opts.mongodbUri,
      TEMPORAL_ADDRESS: opts.temporalAddress,
      TEMPORAL_TASK_QUEUE: opts.taskQueue,
      PORT: String(port),
      HOST: '127.0.0.1',
      // The first API's address stands for the balancer's.
      PUBLIC_URL: `http://127.0.0.1:${ports[0]}`,
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // The worker takes WEBHOOK_ALLOW_PRIVATE_NETWORKS only with this (its HOST binds only its metrics).
      ALLOW_UNSAFE_LOCAL_SETTINGS: 'true',
      CLAIM_VERIFICATION: 'true',
      // Free ports: several workers may run at once (tests, other scenarios).
      WORKER_METRICS_PORT: '0',
      TEMPORAL_METRICS_PORT: '0',
      // Deno: no update check (no network here); the receivers' CA, which Deno reads from DENO_CERT.
      ...(runtime === 'deno' ? { DENO_NO_UPDATE_CHECK: '1' } : {}),
      ...opts.extraEnv,
    };
    if (runtime === 'deno' && env.NODE_EXTRA_CA_CERTS && !env.DENO_CERT) env.DENO_CERT = env.NODE_EXTRA_CA_CERTS;
    return env;
  };
  const nth = (i: number) => (i === 0 ? '' : String(i + 1));
  const apiUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  const apis = ports.map(
    (port, i) =>
      new ManagedProcess({
        name: `api${nth(i)}`,
        ...entryCommand(runtime, join(ROOT, 'src/api/server.ts')),
        env: envFor(port),
        log: join(opts.runDir, `api${nth(i)}-${opts.taskQueue}.log`),
        ready: () => httpOk(`${apiUrls[i]}/readyz`),
      }),
  );
  const workers = Array.from({ length: counts.workers }, (_, i) => {
    const workerLog = join(opts.runDir, `worker${nth(i)}-${opts.taskQueue}.log`);
    return new ManagedProcess({
      name: `worker${nth(i)}`,
      ...entryCommand(runtime, join(ROOT, 'worker.ts')),
      env: envFor(ports[0] ?? 0),
      log: workerLog,
      // Each start logs "worker running" once more: ready when the log holds one per start.
      ready: async (starts) => (readFileSync(workerLog, 'utf8').match(/worker running/g) ?? []).length >= starts,
    });
  });
  return { apis, workers, apiUrls };
}
