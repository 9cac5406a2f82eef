/**
 * A database outage answers 503 `service_unavailable` within DB_UNAVAILABLE_TIMEOUT_MS, never a
 * hang or a 500, and a request retried with the same Idempotency-Key once the database is back
 * applies exactly once. This file runs its own FerretDB (SQLite handler, data in a temporary
 * directory), kills it with SIGKILL and starts it again on the same port and data.
 */
import { spawn, ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { closedPort } from '../support/httpsReceiver';
import { portOpen } from '../support/devServer';
import { waitFor } from '../support/wait';
import { READY_CACHE_MS } from '../../src/api/health/routes';
import { connectDatabase, disconnectDatabase, pingDatabase } from '../../src/db/connection';
import { Customer } from '../../src/models/customer';
import { IdempotencyKey } from '../../src/models/idempotencyKey';
import { isDatabaseUnavailable } from '../../src/models/errors';
import { completeKeyLater, reserveKey } from '../../src/services/writes/idempotency';
import mongoose from 'mongoose';

// The driver mongoose runs on (not a dependency of its own here).
const { MongoNetworkError, MongoNetworkTimeoutError, MongoServerError, MongoServerSelectionError } = mongoose.mongo;

const FERRETDB = path.join(__dirname, '../../.tools/bin/ferretdb');
/** Short, so the test is quick. */
const UNAVAILABLE_MS = 3_000;

/**
 * The waits the setting configures (asserted on the connection below), so the wall-clock bounds
 * follow from them rather than from a guess: each answer must come within twice the waits that
 * can follow each other. That leaves room for a loaded machine and is still far below the
 * defaults' waits (30 s selection and connect, 10 s buffer, 10 s heartbeat) or a hang.
 */
function configuredWaits() {
  const o = mongoose.connection.getClient().options;
  return { selection: o.serverSelectionTimeoutMS, connect: o.connectTimeoutMS, heartbeat: o.heartbeatFrequencyMS, buffer: mongoose.get('bufferTimeoutMS') as number };
}

let dir = '';
let port = 0;
let ferretdb: ChildProcess | null = null;
let api: TestApi;

async function startFerretDB(): Promise<void> {
  // A fresh debug (metrics) port each time: only the wire port must stay the same.
  const debugPort = await closedPort();
  const child = spawn(
    FERRETDB,
    [
      '--handler=sqlite',
      `--sqlite-url=file:${dir}/sqlite/`,
      `--state-dir=${dir}/state`,
      `--listen-addr=127.0.0.1:${port}`,
      `--debug-addr=127.0.0.1:${debugPort}`,
      '--telemetry=disable',
      '--log-level=error',
    ],
    { stdio: 'ignore' },
  );
  ferretdb = child;
  await waitFor(() => portOpen(port), 'FerretDB to listen', 60_000);
}

/** Whether process `pid` holds the socket listening on 127.0.0.1:`port` (from /proc/net/tcp and its fds). */
function holdsListener(pid: number, port: number): boolean {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/))
    .filter((f) => f[1] === local && f[3] === '0A').map((f) => `socket:[${f[9]}]`);
  return readdirSync(`/proc/${pid}/fd`).some((fd) => {
    try {
      return inodes.includes(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      return false; // closed meanwhile
    }
  });
}

/** A process's state letter from /proc (T: stopped by a signal); after the last `)`, as the name may hold one. */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

async function killFerretDB(): Promise<void> {
  const child = ferretdb;
  ferretdb = null;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  await waitFor(async () => !(await portOpen(port)), 'the FerretDB port to close');
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(process.env.TEST_RUN_DIR ?? os.tmpdir(), 'db-outage-'));
  for (const sub of ['sqlite', 'state']) mkdirSync(path.join(dir, sub));
  port = await closedPort();
  await startFerretDB();
  await connectDatabase(`mongodb://127.0.0.1:${port}/outage`, { unavailableTimeoutMs: UNAVAILABLE_MS });
  api = await startTestApi(
    { probes: [{ name: 'database', check: pingDatabase }] },
    { DB_UNAVAILABLE_TIMEOUT_MS: String(UNAVAILABLE_MS) },
  );
});

afterAll(async () => {
  await api?.close();
  await disconnectDatabase().catch(() => undefined);
  await killFerretDB();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('database outage', () => {
  it('bounds every wait on the database by DB_UNAVAILABLE_TIMEOUT_MS', () => {
    expect(configuredWaits()).toEqual({ selection: UNAVAILABLE_MS, connect: UNAVAILABLE_MS, heartbeat: UNAVAILABLE_MS / 2, buffer: UNAVAILABLE_MS });
  });

  it('answers 503 service_unavailable quickly while the database is down; the same Idempotency-Key applies once after', async () => {
    const a = await newAccount(api.url);
    expect((await a.api.post('/v1/customers', { email: 'before@example.com' })).status).toBe(201);
    expect((await a.api.get('/readyz')).status).toBe(200);

    // A request that held a key when the database went away: its release waits for the database.
    const held = await reserveKey({ accountId: a.account_id, sandbox: null }, `held-${Date.now()}`, 'POST', '/v1/things', {});
    if (held.kind !== 'new') throw new Error('expected a new reservation');

    await killFerretDB();
    completeKeyLater(held, 503, null);
    const key = { 'Idempotency-Key': `outage-${Date.now()}` };
    const body = { email: 'during@example.com', first_name: 'Ada' };

    for (const send of [() => a.api.post('/v1/customers', body, key), () => a.api.get('/v1/customers')]) {
      const started = Date.now();
      const res = await send();
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({
        type: 'api_error',
        code: 'service_unavailable',
        message: 'The database is unavailable; retry later (safe with the same Idempotency-Key)',
        param: null,
      });
      expect(res.body.error.doc_url).toMatch(/\/docs\/errors#service_unavailable$/);
      expect(res.headers.get('retry-after')).toBe('5');
      // Bounded by the setting, not the driver's 30 s (or a hang): a command buffered while
      // mongoose is disconnected, then its server selection.
      const w = configuredWaits();
      expect(took).toBeLessThan(2 * (w.buffer + w.selection));
    }
    // /readyz answers from its last probe for READY_CACHE_MS: the outage shows once that answer is older.
    const ready = await waitFor(async () => {
      const r = await a.api.get('/readyz');
      return r.status === 503 ? r : null;
    }, '/readyz to report the outage', READY_CACHE_MS + 10_000);
    expect(ready.body).toEqual({ status: 'unavailable' });

    await startFerretDB();
    await waitFor(async () => (await a.api.get('/readyz')).status === 200, 'readiness after the restart', 60_000);
    const retried = await a.api.post('/v1/customers', body, key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await a.api.post('/v1/customers', body, key);
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.id).toBe(retried.body.id);
    expect(await Customer.countDocuments({ email: 'during@example.com' })).toBe(1);
    // What was written before the outage survived it (SQLite handler, same data directory).
    expect(await Customer.countDocuments({ email: 'before@example.com' })).toBe(1);
    // The key held across the outage was released once the database answered.
    await waitFor(async () => (await IdempotencyKey.countDocuments({ _id: held.id })) === 0, 'the held key to be released', 30_000);
  });

  it('answers 503 within the bound when the server freezes (connections open, nothing answers), and recovers', async () => {
    const a = await newAccount(api.url);
    expect((await a.api.get('/v1/customers')).status).toBe(200);
    const child = ferretdb!;
    // The server this file started is the one answering (a 200 during the freeze once went
    // unexplained in a full run): alive, and stopped before the first request is sent.
    expect(child.exitCode).toBeNull();
    expect(child.signalCode).toBeNull();
    expect(holdsListener(child.pid!, port)).toBe(true);
    expect(child.kill('SIGSTOP')).toBe(true);
    try {
      await waitFor(async () => processState(child.pid!) === 'T', 'FerretDB to be stopped', 5_000);
      for (let i = 0; i < 2; i++) {
        const started = Date.now();
        const res = await a.api.get('/v1/customers');
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('service_unavailable');
        // The request in flight waits for the heartbeat to give up on the server (its next hello,
        // timed out by the connect timeout), and the driver's one retry of a read for a new server selection.
        const w = configuredWaits();
        expect(Date.now() - started).toBeLessThan(2 * (w.heartbeat + w.connect + w.selection));
      }
    } finally {
      child.kill('SIGCONT');
    }
    await waitFor(async () => (await a.api.get('/v1/customers')).status === 200, 'answers after the server resumes', 60_000);
  });

  it('recognises unreachable-database errors by class, and nothing else', () => {
    expect(isDatabaseUnavailable(new MongoNetworkError('connection reset'))).toBe(true);
    expect(isDatabaseUnavailable(new MongoNetworkTimeoutError('timed out'))).toBe(true);
    expect(isDatabaseUnavailable(new MongoServerSelectionError('no server', { type: 'Unknown', servers: new Map() } as never))).toBe(true);
    const buffered = Object.assign(new Error('Operation `customers.findOne()` buffering timed out after 3000ms'), { name: 'MongooseError' });
    expect(isDatabaseUnavailable(buffered)).toBe(true);
    expect(isDatabaseUnavailable(new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key' }))).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });
});
