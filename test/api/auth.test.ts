import { scryptSync } from 'node:crypto';
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { waitFor } from '../support/wait';
import { ApiToken } from '../../src/models/apiToken';
import { User } from '../../src/models/user';
import { createAccount, createTokenFor, revokeToken, spendOtpStep, verifySignIn } from '../../src/services/accounts/accounts';
import { currentOtp } from '../../src/cryptography/totp';
import { hashToken } from '../../src/cryptography/tokens';
import { verifyPassword } from '../../src/cryptography/password';
import { AUTH_LIMITS, AuthThrottle } from '../../src/api/auth/throttle';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('authentication', () => {
  it('accepts Bearer and token keywords and answers 401 otherwise', async () => {
    const a = await newAccount(api.url);
    const anon = client(api.url);
    for (const header of [`Bearer ${a.token}`, `token ${a.token}`, `Token token="${a.token}"`, `bearer ${a.token}`]) {
      expect((await anon.get('/v1/customers', { Authorization: header })).status).toBe(200);
    }
    for (const header of ['', 'Bearer', `Basic ${a.token}`, `Bearer ${'0'.repeat(32)}`, `Bearer ${a.token}x`]) {
      const r = await anon.get('/v1/customers', header ? { Authorization: header } : {});
      expect(r.status).toBe(401);
      expect(r.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_credentials', message: 'Invalid or missing API token', param: null });
    }
    // The token itself is never stored, only its hash.
    expect(await ApiToken.countDocuments({ _id: a.token })).toBe(0);
    expect(await ApiToken.countDocuments({ _id: hashToken(a.token) })).toBe(1);
    expect(a.token).toMatch(/^[0-9a-f]{32}$/);
  });

  it('records last_used_at and revokes at once', async () => {
    const a = await newAccount(api.url);
    expect((await a.api.get('/v1/me')).status).toBe(200);
    // Kept apart from the token (a use written on it could undo a racing revocation), shown by /v1/me;
    // recorded after the answer (not awaited), so looked for until it lands.
    const lastUsed = await waitFor(async () => (await a.api.get('/v1/me')).body.token.last_used_at as string | null, 'last_used_at', 10_000);
    expect(Date.parse(lastUsed)).toBeGreaterThan(Date.now() - 60_000);
    expect((await ApiToken.findById(hashToken(a.token)).lean())?.last_used_at).toBeNull();
    expect(await revokeToken(a.token)).toBe(true);
    expect((await a.api.get('/v1/me')).status).toBe(401);
  });

  it('POST /v1/auth issues a production token for good credentials only', async () => {
    const a = await newAccount(api.url);
    const anon = client(api.url);
    const ok = await anon.post('/v1/auth', { email: a.email.toUpperCase(), password: a.password });
    expect(ok.status).toBe(200);
    expect(ok.body.token).toMatch(/^[0-9a-f]{32}$/);
    const me = await client(api.url, ok.body.token).get('/v1/me');
    expect(me.body).toMatchObject({ id: a.user_id, email: a.email, account: { id: a.account_id }, sandbox: null });
    expect(me.body.token.last4).toBe(ok.body.token.slice(-4));

    const wrong = await anon.post('/v1/auth', { email: a.email, password: 'nope' });
    expect(wrong.status).toBe(401);
    expect(typeof wrong.body.error).toBe('string');
    expect((await anon.post('/v1/auth', { email: 'nobody@x.io', password: 'x' })).status).toBe(401);
    const missing = await anon.post('/v1/auth', { email: a.email });
    expect(missing.status).toBe(400);
    expect(typeof missing.body.error).toBe('string');
  });

  it('asks for and checks the TOTP code when two-factor is on', async () => {
    const a = await newAccount(api.url, { totp: true });
    const anon = client(api.url);
    const need = await anon.post('/v1/auth', { email: a.email, password: a.password });
    expect(need.status).toBe(422);
    expect(need.body).toEqual({ error: 'otp_attempt_required' });
    const bad = await anon.post('/v1/auth', { email: a.email, password: a.password, otp_attempt: '000000' === currentOtp(a.otp_secret!) ? '111111' : '000000' });
    expect(bad.status).toBe(401);
    // One step of drift is accepted (then a later step: each step is usable once, in order). The
    // previous step is one step behind only while this step lasts: start early in a fresh step.
    const intoStep = Date.now() % 30_000;
    if (intoStep > 15_000) await new Promise((r) => setTimeout(r, 30_000 - intoStep + 100));
    const drift = await anon.post('/v1/auth', { email: a.email, password: a.password, otp_attempt: currentOtp(a.otp_secret!, Date.now() - 30_000) });
    expect(drift.status).toBe(200);
    const good = await anon.post('/v1/auth', { email: a.email, password: a.password, otp_attempt: currentOtp(a.otp_secret!) });
    expect(good.status).toBe(200);
  });

  it('refuses a TOTP code at or before the last one accepted (no replay within the drift window)', async () => {
    const a = await newAccount(api.url, { totp: true });
    const anon = client(api.url);
    const signIn = (otp: string) => anon.post('/v1/auth', { email: a.email, password: a.password, otp_attempt: otp });
    const now = Date.now();
    expect((await signIn(currentOtp(a.otp_secret!, now))).status).toBe(200);
    const replay = await signIn(currentOtp(a.otp_secret!, now));
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual({ error: 'Invalid two-factor code' });
    // An older code still inside the drift window is refused too; a later step is accepted once.
    expect((await signIn(currentOtp(a.otp_secret!, now - 30_000))).status).toBe(401);
    expect((await signIn(currentOtp(a.otp_secret!, now + 30_000))).status).toBe(200);
    expect((await signIn(currentOtp(a.otp_secret!, now + 30_000))).status).toBe(401);
    expect((await signIn(currentOtp(a.otp_secret!, now))).status).toBe(401);
  });

  it('one TOTP step spent by several sign-ins at once is spent by exactly one of them', async () => {
    // Before spent steps were inserts, a conditional update of the user decided, and FerretDB v1
    // let every concurrent update match: one relayed code could open several sessions. (The
    // spend itself: sign-ins through HTTP are throttled per client, and their password checks
    // finish one after another.)
    const a = await newAccount(api.url, { totp: true });
    const user = (await User.findOne({ email: a.email }).lean())!;
    const step = Math.floor(Date.now() / 30_000);
    for (let round = 0; round < 20; round++) {
      const spent = await Promise.all(Array.from({ length: 6 }, () => spendOtpStep(user, step + round)));
      expect(spent.filter(Boolean)).toHaveLength(1);
    }
    // And a sign-in with a code of a spent step is refused.
    const code = currentOtp(a.otp_secret!, (step + 19) * 30_000);
    await expect(verifySignIn({ email: a.email, password: a.password, otp_attempt: code })).rejects.toThrow('Invalid two-factor code');
  });

  it('sign-ups at once get distinct users', async () => {
    const stamp = Date.now();
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => createAccount({ email: `at-once-${stamp}-${i}@example.com`, password: 'a long password 1' })));
    expect(new Set(made.map((m) => m.user_id)).size).toBe(8);
  });

  it('rehashes a password stored with the old scrypt cost (N=2^14) on a successful sign-in', async () => {
    const a = await newAccount(api.url);
    const salt = Buffer.alloc(16, 3);
    const legacy = ['scrypt', 16384, 8, 1, salt.toString('base64'), scryptSync(a.password, salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64')].join('$');
    await User.updateOne({ _id: a.user_id }, { $set: { password_hash: legacy } });
    const anon = client(api.url);
    expect((await anon.post('/v1/auth', { email: a.email, password: 'wrong password' })).status).toBe(401);
    expect((await User.findById(a.user_id).lean())!.password_hash).toBe(legacy);
    expect((await anon.post('/v1/auth', { email: a.email, password: a.password })).status).toBe(200);
    const stored = (await User.findById(a.user_id).lean())!.password_hash;
    expect(stored).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword(a.password, stored)).toBe(true);
    expect((await anon.post('/v1/auth', { email: a.email, password: a.password })).status).toBe(200);
  });

  it('sandbox tokens see only sandbox data; /v1/me names the sandbox', async () => {
    const a = await newAccount(api.url);
    expect((await a.sandbox.get('/v1/me')).body.sandbox).toBe('default');
    const prod = (await a.api.post('/v1/customers', { email: 's@x.io' })).body;
    const sand = (await a.sandbox.post('/v1/customers', { email: 's@x.io' })).body;
    expect((await a.sandbox.get(`/v1/customers/${prod.id}`)).status).toBe(404);
    expect((await a.api.get(`/v1/customers/${sand.id}`)).status).toBe(404);
    expect((await a.sandbox.get('/v1/customers')).body.customers.map((c: any) => c.id)).toEqual([sand.id]);
    // Each scope has its own account wallet.
    const wallets = (await a.sandbox.get('/v1/wallets')).body.wallets.filter((w: any) => w.owner_type === 'account');
    expect(wallets).toHaveLength(1);
    const more = await createTokenFor(a.account_id, 'staging');
    expect((await client(api.url, more).get('/v1/me')).body.sandbox).toBe('staging');
    expect((await client(api.url, more).get('/v1/customers')).body.customers).toEqual([]);
  });

  it('lists, shows and renames the user\'s accounts, never another\'s', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    const list = await a.api.get('/v1/accounts');
    expect(list.body.accounts.map((x: any) => x.id)).toEqual([a.account_id]);
    expect((await a.api.get(`/v1/accounts/${a.account_id}`)).body.id).toBe(a.account_id);
    expect((await a.api.get(`/v1/accounts/${b.account_id}`)).status).toBe(404);
    const renamed = await a.api.patch(`/v1/accounts/${a.account_id}`, { name: ' Acme ' });
    expect(renamed.body.name).toBe('Acme');
    expect((await a.api.patch(`/v1/accounts/${b.account_id}`, { name: 'x' })).status).toBe(404);
    expect((await a.api.patch(`/v1/accounts/${a.account_id}`, { name: ' ' })).status).toBe(422);
    expect((await a.api.get('/v1/me')).body.account.name).toBe('Acme');
  });

  it('pages /v1/accounts like every other list (page 0 or not a number: 422)', async () => {
    const a = await newAccount(api.url);
    for (const page of ['0', '-1', 'x', '1.5']) {
      const r = await a.api.get(`/v1/accounts?page=${page}`);
      expect([page, r.status]).toEqual([page, 422]);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'page' });
    }
    expect((await a.api.get('/v1/accounts?page=2')).body).toEqual({ accounts: [], pagination: { page: 2, pages: 1, count: 1 } });
  });
});

// The throttle's rules on a fake clock: test/api/signInThrottle.test.ts.
describe('sign-in throttling (POST /v1/auth)', () => {
  it('answers 429 with Retry-After (simple format) once an email is locked for a client, even for the right password; the owner elsewhere signs in', async () => {
    const own = await startTestApi({}, { TRUST_PROXY: 'true' });
    try {
      const a = await newAccount(own.url);
      const anon = client(own.url);
      const from = (ip: string) => ({ 'X-Forwarded-For': ip });
      for (let i = 0; i < 6; i++) expect((await anon.post('/v1/auth', { email: a.email, password: `wrong-${i}` }, from('198.51.100.7'))).status).toBe(401);
      const locked = await anon.post('/v1/auth', { email: ` ${a.email.toUpperCase()}`, password: a.password }, from('198.51.100.7'));
      expect(locked.status).toBe(429);
      expect(locked.body).toEqual({ error: expect.stringMatching(/^Too many sign-in attempts, retry after \d+ seconds$/) });
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The client itself is not locked by one account's failures.
      const b = await newAccount(own.url);
      expect((await anon.post('/v1/auth', { email: b.email, password: b.password }, from('198.51.100.7'))).status).toBe(200);
      // Nor is the email for anyone else: the owner on another address is slowed down (no new field), not refused.
      expect((await anon.post('/v1/auth', { email: a.email, password: 'still wrong' }, from('203.0.113.9'))).status).toBe(401);
      const t0 = performance.now();
      expect((await anon.post('/v1/auth', { email: a.email, password: a.password }, from('203.0.113.9'))).status).toBe(200);
      expect(performance.now() - t0).toBeLessThan(5000);
    } finally {
      await own.close();
    }
  });

  it('locks a client that fails over many emails (unknown ones too), by its address behind the proxy', async () => {
    const throttle = new AuthThrottle({ ...AUTH_LIMITS, freeFailures: { emailClient: 5, client: 2 } });
    const own = await startTestApi({ authThrottle: throttle }, { TRUST_PROXY: 'true' });
    try {
      const anon = client(own.url);
      const from = (ip: string) => ({ 'X-Forwarded-For': ip });
      for (let i = 0; i < 3; i++) expect((await anon.post('/v1/auth', { email: `nobody${i}@x.io`, password: 'guess' }, from('198.51.100.7'))).status).toBe(401);
      const locked = await anon.post('/v1/auth', { email: 'nobody9@x.io', password: 'guess' }, from('198.51.100.7'));
      expect(locked.status).toBe(429);
      expect(locked.headers.get('retry-after')).toBe('1');
      expect((await anon.post('/v1/auth', { email: 'nobody9@x.io', password: 'guess' }, from('198.51.100.8'))).status).toBe(401);
    } finally {
      await own.close();
    }
  });

  it('takes as long for an unknown email as for a known one with a wrong password (a dummy hash is checked)', async () => {
    // Counted, not timed: the same scrypt runs, with the same cost parameters, for either answer.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const scrypt = jest.spyOn(require('node:crypto') as typeof import('node:crypto'), 'scrypt');
    const own = await startTestApi();
    try {
      const a = await newAccount(own.url);
      const anon = client(own.url);
      const scryptRuns = async (email: string) => {
        scrypt.mockClear();
        const r = await anon.post('/v1/auth', { email, password: 'not the password' });
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ error: 'Invalid email or password' });
        return scrypt.mock.calls.map((c) => {
          const { N, r: blockSize, p } = c[3] as { N: number; r: number; p: number };
          return [N, blockSize, p];
        });
      };
      const known = await scryptRuns(a.email);
      expect(known).toEqual([[131072, 8, 1]]);
      for (let i = 0; i < 2; i++) expect(await scryptRuns(`nobody-${i}@example.com`)).toEqual(known);
    } finally {
      scrypt.mockRestore();
      await own.close();
    }
  });
});
