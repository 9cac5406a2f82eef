/**
 * Every environment variable the service reads, in one place, with defaults and validation.
 * A bad value stops start-up with a message naming the variable.
 */
import { readFileSync } from 'node:fs';
import { isLoopbackHost, parseProxyList } from '../lib/network';

export class ConfigError extends Error {}

/** Every variable loadConfig reads (docker-compose.yml is checked against this list). */
export const CONFIG_VARIABLES = [
  'PORT', 'HOST', 'LOG_LEVEL', 'MONGODB_URI', 'PUBLIC_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE',
  'TEMPORAL_TASK_QUEUE', 'RATE_LIMIT_PER_MINUTE', 'INVOICE_DUE_DAYS', 'SLIPPAGE_TOLERANCE',
  'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'CLAIM_VERIFICATION', 'CLAIM_CHALLENGE_HMAC_KEY', 'PRICE_ORACLE', 'COINGECKO_URL', 'COINGECKO_API_KEY',
  'ETH_RPC_URL', 'ETH_CONFIRMATIONS', 'ETH_POLL_SECONDS', 'BTC_ESPLORA_URL', 'BTC_CONFIRMATIONS', 'BTC_POLL_SECONDS',
  'TRUST_PROXY', 'ALLOW_UNSAFE_LOCAL_SETTINGS', 'PUBLIC_RATE_LIMIT_PER_MINUTE', 'DRAIN_TIMEOUT_MS',
  'WORKER_METRICS_PORT', 'TEMPORAL_METRICS_PORT', 'WORKER_MAX_CACHED_WORKFLOWS',
  'DB_UNAVAILABLE_TIMEOUT_MS', 'TEMPORAL_CLIENT_TRANSPORT', 'WEBHOOK_ALLOWED_PORTS', 'METRICS_TOKEN',
  'TEMPORAL_TLS', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA', 'TEMPORAL_TLS_SERVER_NAME', 'TEMPORAL_API_KEY',
  'HTTP_KEEP_ALIVE_TIMEOUT_MS', 'HTTP_HEADERS_TIMEOUT_MS', 'REDIS_URL', 'API_PROCESSES',
  'TEMPORAL_UI_URL', 'CONSOLE_SESSION_TTL_SECONDS', 'WORKER_WORKFLOW_TASK_POLLERS', 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
  'WORKER_WORKFLOW_THREADS', 'WORKER_STICKY_TIMEOUT_SECONDS',
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

/** Ports besides 443 a webhook URL may name: a comma-separated list (empty: 443 only). */
function portList(env: Env, name: string): number[] {
  const raw = str(env, name, '').trim();
  if (raw === '') return [];
  const ports = raw.split(',').map((p) => p.trim());
  const bad = ports.find((p) => !/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535);
  if (bad !== undefined) throw new ConfigError(`${name} must be a comma-separated list of ports (1 to 65535), got "${raw}"`);
  return [...new Set(ports.map(Number))];
}

/**
 * An optional bearer token (empty: not configured): 32+ characters, as a guessable one would
 * guard nothing, and visible ASCII only, so it fits an `Authorization` header as given.
 */
function bearerToken(env: Env, name: string): string | null {
  const v = secretKey(env, name);
  if (v !== null && !/^[\x21-\x7e]+$/.test(v)) throw new ConfigError(`${name} must be printable ASCII without spaces`);
  return v;
}

/** `false` (default), `true` (loopback), or a comma-separated list of addresses or CIDR ranges. */
function proxyList(env: Env, name: string): string[] {
  const raw = str(env, name, 'false');
  const ranges = parseProxyList(raw);
  if (!ranges) throw new ConfigError(`${name} must be true, false or a comma-separated list of proxy addresses or CIDR ranges, got "${raw}"`);
  return ranges;
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

/** A PEM file named by `name` (empty: none), read once, here: unreadable or not PEM is a configuration error. */
function pemFile(env: Env, name: string, kind: 'CERTIFICATE' | 'PRIVATE KEY'): Uint8Array | null {
  const path = str(env, name, '');
  if (path === '') return null;
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${name}: cannot read "${path}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  // "PRIVATE KEY" also matches PKCS#1 (RSA) and SEC1 (EC) keys, which both transports take.
  if (!new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(pem.toString('latin1'))) {
    throw new ConfigError(`${name}: "${path}" is not a PEM ${kind === 'CERTIFICATE' ? 'certificate' : 'private key'}`);
  }
  return new Uint8Array(pem);
}

/** What the Temporal SDK's `tls` option takes (both transports). */
export interface TemporalTls {
  serverNameOverride?: string;
  serverRootCACertificate?: Uint8Array;
  clientCertPair?: { crt: Uint8Array; key: Uint8Array };
}

/**
 * TLS toward Temporal, null: plaintext (the dev server). On when TEMPORAL_TLS=true (system roots),
 * or when any of the other settings is set: a client certificate and key (mTLS), a CA for the
 * server, a server name, an API key (Temporal Cloud: never sent in the clear).
 */
function temporalTls(env: Env, apiKey: string | null): TemporalTls | null {
  const crt = pemFile(env, 'TEMPORAL_TLS_CERT', 'CERTIFICATE');
  const key = pemFile(env, 'TEMPORAL_TLS_KEY', 'PRIVATE KEY');
  if ((crt === null) !== (key === null)) throw new ConfigError('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: set both (mTLS) or neither');
  const ca = pemFile(env, 'TEMPORAL_TLS_CA', 'CERTIFICATE');
  const serverName = str(env, 'TEMPORAL_TLS_SERVER_NAME', '');
  const tls: TemporalTls = {
    ...(serverName !== '' ? { serverNameOverride: serverName } : {}),
    ...(ca !== null ? { serverRootCACertificate: ca } : {}),
    ...(crt !== null && key !== null ? { clientCertPair: { crt, key } } : {}),
  };
  const implied = Object.keys(tls).length > 0 || apiKey !== null;
  const on = bool(env, 'TEMPORAL_TLS', implied);
  if (!on && implied) {
    throw new ConfigError('TEMPORAL_TLS=false contradicts TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME and TEMPORAL_API_KEY, which need TLS: unset them or TEMPORAL_TLS');
  }
  return on ? tls : null;
}

/**
 * Where and how the API, the worker and the harnesses (bench, faults) reach Temporal; the TLS
 * files are read here, once, at start-up.
 */
export function loadTemporalConfig(env: Env = process.env) {
  const temporalApiKey = str(env, 'TEMPORAL_API_KEY', '') || null;
  if (temporalApiKey !== null && !/^[\x21-\x7e]+$/.test(temporalApiKey)) throw new ConfigError('TEMPORAL_API_KEY must be printable ASCII without spaces');
  return {
    address: str(env, 'TEMPORAL_ADDRESS', '127.0.0.1:7233'),
    namespace: str(env, 'TEMPORAL_NAMESPACE', 'default'),
    taskQueue: str(env, 'TEMPORAL_TASK_QUEUE', 'payments'),
    /**
     * How the Temporal client (API and worker) reaches the server: `grpc-js` (the SDK's
     * Connection, over node:http2) or `native` (the SDK's NativeConnection, the Rust core the
     * worker polls with). `auto` (default): native in the worker, whose core is loaded anyway
     * and which starts and signals workflows from its activities (cheaper per call than
     * grpc-js), and on Deno, whose node:http2 dies on the server's periodic GOAWAY
     * (docs/adr/0710-client-transport.md); grpc-js in a Node API process. See `clientTransportOf`.
     */
    clientTransport: oneOf(env, 'TEMPORAL_CLIENT_TRANSPORT', 'auto', ['auto', 'grpc-js', 'native'] as const),
    /** The files' contents, read here at start-up (docs/architecture.md, "Exposing Temporal"); null: plaintext. */
    tls: temporalTls(env, temporalApiKey),
    /** Temporal Cloud's API key, sent as `Authorization: Bearer` (over TLS only). */
    apiKey: temporalApiKey,
  };
}

/** Which process reads the settings: the worker's HOST says nothing about where it sends webhooks. */
export type ProcessRole = 'api' | 'worker';

/**
 * Settings that switch a protection off are for local runs: refused unless the API listens on
 * loopback only, or the operator says so with ALLOW_UNSAFE_LOCAL_SETTINGS=true. The worker
 * delivers the webhooks, and its HOST (loopback by default) binds only its metrics, so there
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true needs ALLOW_UNSAFE_LOCAL_SETTINGS=true whatever HOST is.
 */
function refuseUnsafeSettings(c: { host: string; webhookAllowPrivateNetworks: boolean; claimVerification: boolean }, allowUnsafe: boolean, role: ProcessRole) {
  const unsafe = [
    ...(c.claimVerification ? [] : ['CLAIM_VERIFICATION=off']),
    ...(c.webhookAllowPrivateNetworks ? ['WEBHOOK_ALLOW_PRIVATE_NETWORKS=true'] : []),
  ];
  if (unsafe.length === 0 || allowUnsafe) return;
  if (role === 'worker' && c.webhookAllowPrivateNetworks) {
    throw new ConfigError('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true is for local runs only: the worker takes it only with ALLOW_UNSAFE_LOCAL_SETTINGS=true');
  }
  if (isLoopbackHost(c.host)) return;
  throw new ConfigError(
    `${unsafe.join(' and ')} is for local runs only: listen on loopback (HOST=127.0.0.1) or set ALLOW_UNSAFE_LOCAL_SETTINGS=true (HOST is "${c.host}")`,
  );
}

export function loadConfig(env: Env = process.env, role: ProcessRole = 'api') {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const logLevel = str(env, 'LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  const mongodbUri = str(env, 'MONGODB_URI', 'mongodb://127.0.0.1:27017/payments');
  if (!/^mongodb(\+srv)?:\/\//.test(mongodbUri)) {
    throw new ConfigError(`MONGODB_URI must start with mongodb:// or mongodb+srv://`);
  }
  const httpKeepAliveTimeoutMs = int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000, 1_000, 290_000);
  const httpHeadersTimeoutMs = int(env, 'HTTP_HEADERS_TIMEOUT_MS', 66_000, 1_000, 300_000);
  if (httpHeadersTimeoutMs <= httpKeepAliveTimeoutMs) {
    throw new ConfigError(`HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs}) must exceed HTTP_KEEP_ALIVE_TIMEOUT_MS (${httpKeepAliveTimeoutMs})`);
  }
  const config = {
    port,
    host: str(env, 'HOST', '127.0.0.1'),
    /**
     * The reverse proxies whose X-Forwarded-For is believed, as CIDR ranges (`true`: loopback;
     * none by default): the client is the rightmost entry that is not one of them.
     */
    trustProxy: proxyList(env, 'TRUST_PROXY'),
    logLevel,
    mongodbUri,
    /**
     * How long an operation waits for an unreachable database (server selection, mongoose's command
     * buffer, opening a connection; the heartbeat runs every half of it) before failing; the API
     * then answers 503 `service_unavailable` instead of hanging.
     */
    dbUnavailableTimeoutMs: int(env, 'DB_UNAVAILABLE_TIMEOUT_MS', 5_000, 100, 120_000),
    publicUrl: url(env, 'PUBLIC_URL', `http://localhost:${port}`),
    /**
     * Where the API's rate limits count (redis://host:port): shared by every API process. Unset:
     * in each process's memory, right only for a single API process (the scripts refuse more).
     */
    redisUrl: optionalUrl(env, 'REDIS_URL'),
    temporal: loadTemporalConfig(env),
    /**
     * How long the API keeps an idle keep-alive connection open. Above a load balancer's idle
     * timeout (60 s is usual), so that the balancer, not the API, closes idle connections: else it
     * may reuse one just as the API closes it, and its client gets a 502.
     */
    httpKeepAliveTimeoutMs,
    /** How long a client may take to send a request's headers; above the keep-alive timeout (Node's rule). */
    httpHeadersTimeoutMs,
    /** Base URL of the Temporal Web UI: the finance console links each subscription's workflow there. */
    temporalUiUrl: url(env, 'TEMPORAL_UI_URL', 'http://localhost:8233'),
    /** How long a finance console session lasts from sign-in. */
    consoleSessionTtlSeconds: int(env, 'CONSOLE_SESSION_TTL_SECONDS', 8 * 3600, 1, 30 * 86400),
    /** Per account and scope: all of its tokens, on every mount. */
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    /** The worker's /metrics (domain and Temporal SDK metrics), on HOST with METRICS_TOKEN, else loopback; 0: a free port, logged. */
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
    /**
     * API processes sharing PORT (Node's cluster module, src/api/cluster.ts). Under Deno: 1 per
     * process group; several Deno processes run on different ports behind a balancer (docs/running.md, "Several Deno API processes").
     */
    apiProcesses: int(env, 'API_PROCESSES', 1, 1, 256),
    /** On SIGTERM/SIGINT the API lets requests in flight finish for at most this long. */
    drainTimeoutMs: int(env, 'DRAIN_TIMEOUT_MS', 10_000, 0, 600_000),
    /** Per client (IPv6 by /64) on the unauthenticated claim routes and, in a window of its own, the pay page. */
    publicRateLimitPerMinute: int(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    invoiceDueDays: int(env, 'INVOICE_DUE_DAYS', 7, 0, 365),
    slippageTolerance: decimalFraction(env, 'SLIPPAGE_TOLERANCE', '0.005'),
    webhookAllowPrivateNetworks: bool(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    /** Ports a webhook URL may name besides 443 (any, where private networks are allowed). */
    webhookAllowedPorts: portList(env, 'WEBHOOK_ALLOWED_PORTS'),
    /**
     * Guards both /metrics (API and worker): set, they answer only `Authorization: Bearer <it>`;
     * unset, the API's answers 404 and the worker's listens on loopback only.
     */
    metricsToken: bearerToken(env, 'METRICS_TOKEN'),
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
  refuseUnsafeSettings(config, bool(env, 'ALLOW_UNSAFE_LOCAL_SETTINGS', false), role);
  return config;
}

export type Config = ReturnType<typeof loadConfig>;

/**
 * Settings that start but are likely wrong, for the API to log at start-up. An https PUBLIC_URL
 * means a TLS proxy in front (the API speaks plain HTTP): with no proxy trusted, every client
 * has the proxy's address, so one client's requests fill everyone's per-IP limits.
 */
export function configWarnings(config: Pick<Config, 'publicUrl' | 'trustProxy'>): string[] {
  if (config.publicUrl.startsWith('https:') && config.trustProxy.length === 0) {
    return ['PUBLIC_URL is https but TRUST_PROXY names no proxy: every client behind the TLS proxy shares one address for the per-IP limits and sign-in throttling; set TRUST_PROXY to the proxy\'s address'];
  }
  return [];
}
