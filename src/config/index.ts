/**
 * Every environment variable the service reads, in one place, with defaults and validation.
 * A bad value stops start-up with a message naming the variable.
 */
import { isLoopbackHost } from '../lib/network';

export class ConfigError extends Error {}

/** Every variable loadConfig reads (docker-compose.yml is checked against this list). */
export const CONFIG_VARIABLES = [
  'PORT', 'HOST', 'LOG_LEVEL', 'MONGODB_URI', 'PUBLIC_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE',
  'TEMPORAL_TASK_QUEUE', 'RATE_LIMIT_PER_MINUTE', 'INVOICE_DUE_DAYS', 'SLIPPAGE_TOLERANCE',
  'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'CLAIM_VERIFICATION', 'CLAIM_CHALLENGE_HMAC_KEY', 'PRICE_ORACLE', 'COINGECKO_URL', 'COINGECKO_API_KEY',
  'ETH_RPC_URL', 'ETH_CONFIRMATIONS', 'ETH_POLL_SECONDS', 'BTC_ESPLORA_URL', 'BTC_CONFIRMATIONS', 'BTC_POLL_SECONDS',
  'TRUST_PROXY', 'ALLOW_UNSAFE_LOCAL_SETTINGS', 'PUBLIC_RATE_LIMIT_PER_MINUTE', 'DRAIN_TIMEOUT_MS',
  'WORKER_METRICS_PORT', 'TEMPORAL_METRICS_PORT', 'WORKER_MAX_CACHED_WORKFLOWS',
  'DB_UNAVAILABLE_TIMEOUT_MS', 'TEMPORAL_CLIENT_TRANSPORT',
] as const;

type Env = Record<string, string | undefined>;

/** True under Deno (its global `Deno`), false under Node. */
export function isDeno(): boolean {
  return typeof (globalThis as { Deno?: unknown }).Deno === 'object';
}

function str(env: Env, name: string, def: string): string {
  const v = env[name];
  return v === undefined || v === '' ? def : v;
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (['true', '1', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function decimalFraction(env: Env, name: string, def: string): string {
  const raw = str(env, name, def);
  if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) >= 1) {
    throw new ConfigError(`${name} must be a decimal fraction below 1 (0.005 = 0.5%), got "${raw}"`);
  }
  return raw;
}

function oneOf<T extends string>(env: Env, name: string, def: T, values: readonly T[]): T {
  const v = str(env, name, def);
  if (!(values as readonly string[]).includes(v)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${v}"`);
  return v as T;
}

/** An optional secret key (empty: not configured); a short one is refused as guessable. */
function secretKey(env: Env, name: string): string | null {
  const v = str(env, name, '');
  if (v !== '' && v.length < 32) throw new ConfigError(`${name} must be at least 32 characters`);
  return v === '' ? null : v;
}

/** An optional URL: empty means "not configured". */
function optionalUrl(env: Env, name: string): string | null {
  return str(env, name, '') === '' ? null : url(env, name, '');
}

function url(env: Env, name: string, def: string): string {
  const v = str(env, name, def);
  try {
    new URL(v);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${v}"`);
  }
  return v.replace(/\/+$/, '');
}

/**
 * Settings that switch a protection off are for local runs: refused unless the API listens on
 * loopback only, or the operator says so with ALLOW_UNSAFE_LOCAL_SETTINGS=true.
 */
function refuseUnsafeSettings(c: { host: string; webhookAllowPrivateNetworks: boolean; claimVerification: boolean }, allowUnsafe: boolean) {
  const unsafe = [
    ...(c.claimVerification ? [] : ['CLAIM_VERIFICATION=off']),
    ...(c.webhookAllowPrivateNetworks ? ['WEBHOOK_ALLOW_PRIVATE_NETWORKS=true'] : []),
  ];
  if (unsafe.length === 0 || allowUnsafe || isLoopbackHost(c.host)) return;
  throw new ConfigError(
    `${unsafe.join(' and ')} is for local runs only: listen on loopback (HOST=127.0.0.1) or set ALLOW_UNSAFE_LOCAL_SETTINGS=true (HOST is "${c.host}")`,
  );
}

export function loadConfig(env: Env = process.env) {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  const mongodbUri = str(env, 'MONGODB_URI', 'mongodb://127.0.0.1:27017/payments');
  if (!/^mongodb(\+srv)?:\/\//.test(mongodbUri)) {
    throw new ConfigError(`MONGODB_URI must start with mongodb:// or mongodb+srv://`);
  }
  const config = {
    port,
    host: str(env, 'HOST', '127.0.0.1'),
    /** Behind exactly one reverse proxy: the client address is the X-Forwarded-For entry it appended. */
    trustProxy: bool(env, 'TRUST_PROXY', false),
    logLevel,
    mongodbUri,
    /**
     * How long an operation waits for an unreachable database (server selection, mongoose's command
     * buffer, opening a connection; the heartbeat runs every half of it) before failing; the API
     * then answers 503 `service_unavailable` instead of hanging.
     */
    dbUnavailableTimeoutMs: int(env, 'DB_UNAVAILABLE_TIMEOUT_MS', 5_000, 100, 120_000),
    publicUrl: url(env, 'PUBLIC_URL', `http://localhost:${port}`),
    temporal: {
      address: str(env, 'TEMPORAL_ADDRESS', '127.0.0.1:7233'),
      namespace: str(env, 'TEMPORAL_NAMESPACE', 'default'),
      taskQueue: str(env, 'TEMPORAL_TASK_QUEUE', 'payments'),
      /**
       * How the Temporal client (API and worker) reaches the server: `grpc-js` (the SDK's
       * Connection, over node:http2) or `native` (the SDK's NativeConnection, the Rust core the
       * worker polls with). `auto` (default): native in the worker, whose core is loaded anyway
       * and which starts and signals workflows from its activities (cheaper per call than
       * grpc-js), and on Deno, whose node:http2 dies on the server's periodic GOAWAY
       * (docs/DECISIONS.md, "Deno"); grpc-js in a Node API process. See `clientTransportOf`.
       */
      clientTransport: oneOf(env, 'TEMPORAL_CLIENT_TRANSPORT', 'auto', ['auto', 'grpc-js', 'native'] as const),
    },
    /** Base URL of the Temporal Web UI: the finance console links each subscription's workflow there. */
    temporalUiUrl: url(env, 'TEMPORAL_UI_URL', 'http://localhost:8233'),
    /** How long a finance console session lasts from sign-in. */
    consoleSessionTtlSeconds: int(env, 'CONSOLE_SESSION_TTL_SECONDS', 8 * 3600, 1, 30 * 86400),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    /** The worker's /metrics (domain and Temporal SDK metrics), on HOST; 0: a free port, logged. */
    workerMetricsPort: int(env, 'WORKER_METRICS_PORT', 9464, 0, 65535),
    /** Workflows the worker keeps in memory between tasks (the rest are replayed when they wake). */
    workerMaxCachedWorkflows: int(env, 'WORKER_MAX_CACHED_WORKFLOWS', 1100, 0, 100_000),
    /** Workflow task long-polls the worker keeps open (half on the task queue, half on its sticky queue). */
    workerWorkflowTaskPollers: int(env, 'WORKER_WORKFLOW_TASK_POLLERS', 60, 2, 1_000),
    /** Workflow tasks the worker runs at once (at most the cached workflows, when the cache is on). */
    workerMaxConcurrentWorkflowTasks: int(env, 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', 200, 2, 10_000),
    /** Threads that run workflow code (each with one reused V8 context; a workflow stays on its thread). */
    workerWorkflowThreads: int(env, 'WORKER_WORKFLOW_THREADS', 2, 1, 16),
    /**
     * How long a cached workflow's task may wait for this worker before the server hands it to any
     * worker, which must then replay the workflow from its history (after a crash: how long its
     * cached workflows wait).
     */
    workerStickyTimeoutSeconds: int(env, 'WORKER_STICKY_TIMEOUT_SECONDS', 10, 1, 600),
    /** The Temporal SDK's own exporter, on loopback only: the worker's /metrics relays it. 0: a free port. */
    temporalMetricsPort: int(env, 'TEMPORAL_METRICS_PORT', 9465, 0, 65535),
    /** On SIGTERM/SIGINT the API lets requests in flight finish for at most this long. */
    drainTimeoutMs: int(env, 'DRAIN_TIMEOUT_MS', 10_000, 0, 600_000),
    /** Per client IP on the unauthenticated claim routes and, in a window of its own, the pay page. */
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    invoiceDueDays: int(env, 'INVOICE_DUE_DAYS', 7, 0, 365),
    slippageTolerance: decimalFraction(env, 'SLIPPAGE_TOLERANCE', '0.005'),
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    claimVerification: bool(env, 'CLAIM_VERIFICATION', true),
    /** Signs proof-of-work challenges; the same in every API process. Unset: one key generated and kept in the database. */
    claimChallengeHmacKey: secretKey(env, 'CLAIM_CHALLENGE_HMAC_KEY'),
    priceOracle: {
      /** `fixed`: the embedded rate table; `coingecko`: CoinGecko's historical range API. */
      provider: oneOf(env, 'PRICE_ORACLE', 'fixed', ['fixed', 'coingecko'] as const),
      coingeckoUrl: url(env, 'COINGECKO_URL', 'https://api.coingecko.com/api/v3'),
      coingeckoApiKey: str(env, 'COINGECKO_API_KEY', '') || null,
    },
    /** On-chain detection: a currency is watched when its node URL is set. */
    chains: {
      ETH: {
        rpcUrl: optionalUrl(env, 'ETH_RPC_URL'),
        confirmations: int(env, 'ETH_CONFIRMATIONS', 12, 1, 10_000),
        pollSeconds: int(env, 'ETH_POLL_SECONDS', 5, 1, 3600),
      },
      BTC: {
        esploraUrl: optionalUrl(env, 'BTC_ESPLORA_URL'),
        confirmations: int(env, 'BTC_CONFIRMATIONS', 2, 1, 10_000),
        pollSeconds: int(env, 'BTC_POLL_SECONDS', 30, 1, 3600),
      },
    },
  };
  refuseUnsafeSettings(config, bool(env, 'ALLOW_UNSAFE_LOCAL_SETTINGS', false));
  return config;
}

export type Config = ReturnType<typeof loadConfig>;
