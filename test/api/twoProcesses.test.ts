/**
 * Several API processes (API_PROCESSES, or replicas behind a balancer) agree on everything a
 * client may carry from one to the other: two real API processes (src/api/server.ts, as children,
 * on two ports) on one database, Temporal and Redis. A proof-of-work solution spent on A is refused
 * on B; a challenge issued by A verifies on B (the key is CLAIM_CHALLENGE_HMAC_KEY or one kept in
 * the database, never one per process); a console session from A works on B and a sign-out on A
 * ends it on B; an idempotent POST replayed on B answers A's response. And under the Node cluster
 * entry (src/api/cluster.ts) API_PROCESSES=2 runs two processes on one port, and one killed is
 * replaced while the port keeps answering.
 */
import { spawn, ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { useTestDatabase } from '../support/db';
import { client, newAccount } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { closedPort } from '../support/httpsReceiver';
import { waitFor } from '../support/wait';
import { BTC_BECH32, customerWithWallet, txHash } from '../crypto/helpers';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const altcha = require('altcha-lib/v1') as { solveChallenge(challenge: string, salt: string, algorithm?: string, max?: number): { promise: Promise<{ number: number } | null> } };

jest.setTimeout(300_000);

const ROOT = path.join(__dirname, '../..');
const db = useTestDatabase();

interface ApiProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
}

function apiEnv(port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    MONGODB_URI: db.uri(),
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    TEMPORAL_TASK_QUEUE: `two-processes-${process.pid}`,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    PUBLIC_URL: 'https://pay.example.com',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '100000',
    CLAIM_VERIFICATION: 'true',
    LOG_LEVEL: 'warn',
    ...extra,
  };
  // The point: no configured key, so each process must find the one kept in the database.
  delete env.CLAIM_CHALLENGE_HMAC_KEY;
  return env;
}

async function startProcess(entry: string, extra: Record<string, string> = {}): Promise<ApiProcess> {
  const port = await closedPort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], { cwd: ROOT, env: apiEnv(port, extra), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr!.on('data', (d) => (out = (out + d).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`${entry} exited (${child.exitCode}):\n${out}`);
    return (await fetch(`${url}/readyz`).catch(() => null))?.ok === true;
  }, `${entry} to be ready on ${port}`, 180_000);
  return { url, port, child, output: () => out };
}

async function stopProcess(p: ApiProcess | undefined): Promise<number | null> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return p?.child.exitCode ?? null;
  const exited = new Promise<number | null>((r) => p.child.once('exit', (code) => r(code)));
  p.child.kill('SIGTERM');
  return exited;
}

/** The API processes a cluster primary forked (its other children: tsx's esbuild service). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('src/api/server.ts')) out.push(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

async function solve(challenge: any): Promise<string> {
  const solution = await altcha.solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (!solution) throw new Error('unsolved');
  return Buffer.from(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature })).toString('base64');
}

/** One GET on a connection of its own (no keep-alive pool that could hold a killed process's socket): its status, or 0. */
function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

const secretOf = (link: any) => link.link.split('/pay/')[1];

describe('two API processes on one database', () => {
  let a: ApiProcess;
  let b: ApiProcess;
  beforeAll(async () => {
    // One after the other: the first start is the one that may write the challenge key.
    a = await startProcess('src/api/server.ts');
    b = await startProcess('src/api/server.ts');
  });
  afterAll(async () => {
    await Promise.all([stopProcess(a), stopProcess(b)]);
  });

  it('a challenge issued by A verifies on B, and a solution spent on A is refused on B', async () => {
    const owner = await newAccount(a.url);
    const { customer, wallet } = await customerWithWallet(owner.api);
    await owner.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
    const link = (await owner.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 5 })).body;
    const claim = { amount: '0.01', currency: 'BTC', to_address: BTC_BECH32 };
    const post = (p: ApiProcess, verification: string) => client(p.url).post(`/v1/public/payment_claim_links/${secretOf(link)}/claims`, { ...claim, transaction_id: txHash(), verification });

    // Issued by A, verified (and spent) by B.
    const fromA = await solve((await client(a.url).get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.challenge);
    expect((await post(b, fromA)).status).toBe(201);
    // Spent on A, refused on B.
    const spentOnA = await solve((await client(b.url).get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.challenge);
    expect((await post(a, spentOnA)).status).toBe(201);
    const replay = await post(b, spentOnA);
    expect(replay.status).toBe(422);
    expect(replay.body.error.code).toBe('verification_failed');
    expect((await owner.api.get(`/v1/payment_claim_links/${link.id}`)).body.use_count).toBe(2);
  });

  it('a console session from A works on B, and signing out on A ends it on B', async () => {
    const owner = await newAccount(a.url);
    const onA = consoleBrowser(a.url);
    const signedIn = await onA.signIn(owner.email, owner.password);
    expect([signedIn.status, signedIn.location]).toEqual([303, '/console']);
    const onB = consoleBrowser(b.url);
    for (const [k, v] of onA.jar) onB.jar.set(k, v);
    const overview = await onB.go('GET', '/console');
    expect(overview.status).toBe(200);
    // Its CSRF token, from B's page, is good on A.
    const out = await onA.go('POST', '/console/sign-out', { csrf_token: onB.csrfIn(overview.text) });
    expect([out.status, out.location]).toEqual([303, '/console/sign-in?signed_out=1']);
    const after = await onB.go('GET', '/console');
    expect(after.status).toBe(303);
    expect(after.location).toMatch(/^\/console\/sign-in(\?expired=1)?$/);
  });

  it('an idempotent POST replayed on B answers what A answered', async () => {
    const owner = await newAccount(a.url);
    const key = { 'Idempotency-Key': `two-processes-${Date.now()}-${Math.random().toString(36).slice(2)}` };
    const first = await client(a.url, owner.token).post('/v1/customers', { email: 'once@example.com' }, key);
    expect(first.status).toBe(201);
    const replayed = await client(b.url, owner.token).post('/v1/customers', { email: 'once@example.com' }, key);
    expect(replayed.status).toBe(201);
    expect(replayed.body).toEqual(first.body);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect((await client(b.url, owner.token).get('/v1/customers')).body.customers).toHaveLength(1);
  });
});

describe('API_PROCESSES=2 under the Node cluster entry', () => {
  it('runs two processes on one port, replaces one killed while the port keeps answering, and drains on SIGTERM', async () => {
    const primary = await startProcess('src/api/cluster.ts', { API_PROCESSES: '2' });
    try {
      const pid = primary.child.pid!;
      await waitFor(async () => childrenOf(pid).length === 2, 'two API processes', 60_000);
      const before = childrenOf(pid);
      // Both serve (the primary hands connections round-robin): every request answers.
      for (let i = 0; i < 6; i++) expect(await status(`${primary.url}/healthz`)).toBe(200);

      process.kill(before[0], 'SIGKILL');
      let failed = 0;
      let served = 0;
      // A connection the primary handed to the child just as it died is reset: a client retries
      // such a request once (docs/operations.md, "Faults survived"); the port must answer that retry.
      let retried = 0;
      await waitFor(async () => {
        let code = await status(`${primary.url}/healthz`);
        if (code !== 200) {
          retried += 1;
          code = await status(`${primary.url}/healthz`);
        }
        if (code === 200) served += 1;
        else failed += 1;
        const now = childrenOf(pid);
        return now.length === 2 && !now.includes(before[0]) && now.includes(before[1]);
      }, 'a new API process in place of the killed one', 120_000);
      expect(failed).toBe(0);
      expect(retried).toBeLessThanOrEqual(2);
      expect(served).toBeGreaterThan(0);
      const replacement = childrenOf(pid).find((p) => p !== before[1])!;
      await waitFor(async () => (await status(`${primary.url}/readyz`)) === 200, 'ready again', 120_000);
      expect(primary.output()).toMatch(/api process \d+ exited \(SIGKILL\); starting another in 1s/);

      const children = childrenOf(pid);
      expect(children).toContain(replacement);
      const code = await stopProcess(primary);
      expect(code).toBe(0);
      for (const c of children) expect(() => process.kill(c, 0)).toThrow();
      expect(primary.output()).toMatch(/api cluster stopped/);
    } finally {
      await stopProcess(primary);
    }
  });
});
