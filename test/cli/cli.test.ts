/**
 * The operator CLI (src/cli/index.ts) as operators run it, `node --import tsx src/cli/index.ts`
 * against the test database: accounts, tokens (which the API then accepts or refuses), bad
 * arguments (usage, exit 2, no database needed), and a database that is down (exit 1 within
 * DB_UNAVAILABLE_TIMEOUT_MS). The `transactions canonical-hashes` command is run by
 * test/services/crypto/transactionHashAudit.test.ts.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { useTestDatabase } from '../support/db';
import { startTestApi, TestApi } from '../support/api';

const db = useTestDatabase();
const ROOT = join(__dirname, '..', '..');
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/index.ts', ...args],
      { cwd: ROOT, env: { ...process.env, MONGODB_URI: db.uri(), LOG_LEVEL: 'silent', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - started }),
    );
  });
}

const customers = (token: string) => fetch(`${api.url}/v1/customers`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.status);
const email = () => `cli-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe('cli accounts create', () => {
  it('creates an account whose tokens the API accepts; plain output lists the same fields', async () => {
    const [asJson, plain, totp] = await Promise.all([
      cli(['accounts', 'create', '--email', email(), '--password', 'a-long-password', '--name', 'Acme', '--json']),
      cli(['accounts', 'create', '--email', email(), '--password', 'a-long-password']),
      cli(['accounts', 'create', '--email', email(), '--password', 'a-long-password', '--totp', '--json']),
    ]);
    expect([asJson.code, asJson.stderr]).toEqual([0, '']);
    const created = JSON.parse(asJson.stdout);
    expect(created).toEqual({ account_id: expect.stringMatching(/^acct_/), user_id: expect.any(Number), email: expect.stringMatching(/^cli-/), token: expect.any(String), sandbox_token: expect.any(String) });
    expect(await customers(created.token)).toBe(200);
    expect(await customers(created.sandbox_token)).toBe(200);
    const account = await fetch(`${api.url}/v1/accounts/${created.account_id}`, { headers: { Authorization: `Bearer ${created.token}` } }).then((r) => r.json());
    expect(account).toMatchObject({ id: created.account_id, name: 'Acme' });

    expect(plain.code).toBe(0);
    const fields = Object.fromEntries(plain.stdout.trim().split('\n').map((l) => l.split(/ +/)));
    expect(Object.keys(fields)).toEqual(['account_id', 'user_id', 'email', 'token', 'sandbox_token']);
    expect(await customers(fields.token)).toBe(200);

    expect(totp.code).toBe(0);
    expect(JSON.parse(totp.stdout).otp_secret).toMatch(/^[A-Z2-7]{16,}$/);
  });

  it('refuses a taken email and a short password (exit 2, the reason on stderr, nothing on stdout)', async () => {
    const taken = email();
    expect((await cli(['accounts', 'create', '--email', taken, '--password', 'a-long-password'])).code).toBe(0);
    const [again, short] = await Promise.all([
      cli(['accounts', 'create', '--email', taken.toUpperCase(), '--password', 'a-long-password']),
      cli(['accounts', 'create', '--email', email(), '--password', 'short']),
    ]);
    expect([again.code, again.stdout]).toEqual([2, '']);
    expect(again.stderr).toMatch(/^error: .*already been taken/);
    expect([short.code, short.stdout]).toEqual([2, '']);
    expect(short.stderr).toMatch(/^error: .*too short/);
  });
});

describe('cli tokens', () => {
  it('creates a token (for a new sandbox too) that the API accepts, and revokes it once', async () => {
    const created = JSON.parse((await cli(['accounts', 'create', '--email', email(), '--password', 'a-long-password', '--json'])).stdout);
    const [live, sandbox] = await Promise.all([
      cli(['tokens', 'create', '--account', created.account_id, '--json']),
      cli(['tokens', 'create', '--account', created.account_id, '--sandbox', 'staging', '--json']),
    ]);
    expect(JSON.parse(live.stdout)).toEqual({ account_id: created.account_id, sandbox: null, token: expect.any(String) });
    const staging = JSON.parse(sandbox.stdout);
    expect(staging).toMatchObject({ account_id: created.account_id, sandbox: 'staging' });
    const token = JSON.parse(live.stdout).token;
    expect(await customers(token)).toBe(200);
    expect(await customers(staging.token)).toBe(200);

    const revoked = await cli(['tokens', 'revoke', '--token', token]);
    expect([revoked.code, revoked.stdout.trim()]).toEqual([0, expect.stringMatching(/^revoked +true$/)]);
    expect(await customers(token)).toBe(401);
    expect(await customers(staging.token)).toBe(200);
    const twice = await cli(['tokens', 'revoke', '--token', token]);
    expect([twice.code, twice.stdout, twice.stderr.trim()]).toEqual([2, '', 'no such active token']);
  });

  it('refuses an unknown account (exit 2)', async () => {
    const r = await cli(['tokens', 'create', '--account', 'acct_nosuchaccount']);
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(/^error: Account not found/);
  });
});

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('cli bad arguments and a database that is down', () => {
  it('answers usage (exit 2) to a missing, unknown or malformed argument, without needing the database', async () => {
    const down = { MONGODB_URI: `mongodb://127.0.0.1:${await closedPort()}/payments` };
    const runs = await Promise.all([
      cli([], down),
      cli(['accounts'], down),
      cli(['accounts', 'delete', '--email', 'a@b.c'], down),
      cli(['accounts', 'create', '--email', 'a@b.c'], down),
      cli(['accounts', 'create', '--email', 'a@b.c', '--password', 'a-long-password', '--bogus'], down),
      cli(['accounts', 'create', '--password'], down),
      cli(['tokens', 'create'], down),
      cli(['tokens', 'revoke'], down),
    ]);
    for (const r of runs) {
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toContain('usage:\n  cli accounts create');
    }
  });

  it('fails with exit 1 and the reason, within DB_UNAVAILABLE_TIMEOUT_MS, when the database is down', async () => {
    const down = { MONGODB_URI: `mongodb://127.0.0.1:${await closedPort()}/payments`, DB_UNAVAILABLE_TIMEOUT_MS: '500' };
    // Side by side (start-up times vary with the machine's load): the same command told to wait 8 s.
    const [create, token, patient] = await Promise.all([
      cli(['accounts', 'create', '--email', email(), '--password', 'a-long-password', '--json'], down),
      cli(['tokens', 'create', '--account', 'acct_x'], down),
      cli(['tokens', 'create', '--account', 'acct_x'], { ...down, DB_UNAVAILABLE_TIMEOUT_MS: '8000' }),
    ]);
    for (const r of [create, token, patient]) {
      expect([r.code, r.stdout]).toEqual([1, '']);
      expect(r.stderr).toMatch(/ECONNREFUSED/);
    }
    expect(patient.ms).toBeGreaterThanOrEqual(8_000);
    for (const r of [create, token]) expect(r.ms).toBeLessThan(patient.ms - 5_000);
  });
});
