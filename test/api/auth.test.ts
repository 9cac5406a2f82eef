import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { ApiToken } from '../../src/models/apiToken';
import { createTokenFor, revokeToken } from '../../src/services/accounts';
import { currentOtp } from '../../src/crypto/totp';
import { hashToken } from '../../src/crypto/tokens';

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
    await new Promise((r) => setTimeout(r, 200));
    const doc = await ApiToken.findById(hashToken(a.token)).lean();
    expect(doc?.last_used_at).toBeInstanceOf(Date);
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
    const good = await anon.post('/v1/auth', { email: a.email, password: a.password, otp_attempt: currentOtp(a.otp_secret!) });
    expect(good.status).toBe(200);
    // One step of drift is accepted.
    const drift = await anon.post('/v1/auth', { email: a.email, password: a.password, otp_attempt: currentOtp(a.otp_secret!, Date.now() - 30_000) });
    expect(drift.status).toBe(200);
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
