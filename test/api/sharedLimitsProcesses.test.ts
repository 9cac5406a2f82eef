/**
 * Two real API processes (src/api/server.ts) with one REDIS_URL (scripts/test.sh's redis-server):
 * a limit of N a minute holds as N across both, and sign-in failures on one lock the (email,
 * client) on the other.
 */
import path from 'node:path';
import { spawn, ChildProcess } from 'node:child_process';
import { useTestDatabase } from '../support/db';
import { devServerAddress } from '../support/temporal';
import { closedPort } from '../support/httpsReceiver';
import { waitFor } from '../support/wait';
import { client } from '../support/api';
import { createAccount } from '../../src/services/accounts/accounts';

const db = useTestDatabase();
const root = path.join(__dirname, '..', '..');
const LIMIT = 5;
const children: ChildProcess[] = [];

async function startApi(redisPrefixDb: string): Promise<string> {
  const port = await closedPort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MONGODB_URI: db.uri(),
    TEMPORAL_ADDRESS: devServerAddress(),
    HOST: '127.0.0.1',
    PORT: String(port),
    REDIS_URL: redisPrefixDb,
    RATE_LIMIT_PER_MINUTE: String(LIMIT),
    LOG_LEVEL: 'warn',
  };
  for (const k of ['ETH_RPC_URL', 'BTC_ESPLORA_URL', 'METRICS_TOKEN']) delete env[k];
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/api/server.ts'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.ok === true, 'the API process to listen', 60_000);
  return url;
}

let a = '';
let b = '';
beforeAll(async () => {
  const redis = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  [a, b] = await Promise.all([startApi(redis), startApi(redis)]);
}, 120_000);

afterAll(async () => {
  await Promise.all(
    children.map((c) => (c.exitCode === null ? new Promise((resolve) => { c.once('exit', resolve); c.kill('SIGTERM'); }) : null)),
  );
});

describe('counters shared by two API processes through Redis', () => {
  it(`allows exactly ${LIMIT} requests a minute for one account across both processes`, async () => {
    const created = await createAccount({ email: `shared-${Date.now()}@example.com`, password: 'correct horse battery' });
    const statuses: number[] = [];
    for (let i = 0; i < 2 * LIMIT + 2; i += 1) statuses.push((await client(i % 2 === 0 ? a : b, created.token).get('/v1/customers')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
    expect(statuses.slice(LIMIT).every((s) => s === 429)).toBe(true);
  }, 60_000);

  it('locks the (email, client) on process B after 6 failures on process A', async () => {
    const email = `locked-${Date.now()}@example.com`;
    await createAccount({ email, password: 'correct horse battery' });
    for (let i = 0; i < 6; i += 1) expect((await client(a).post('/v1/auth', { email, password: 'wrong password!!' })).status).toBe(401);
    const onB = await client(b).post('/v1/auth', { email, password: 'correct horse battery' });
    expect(onB.status).toBe(429);
    expect(Number(onB.headers.get('Retry-After'))).toBeGreaterThan(0);
  }, 60_000);
});
