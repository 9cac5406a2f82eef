/**
 * The finance console over plain HTTP: sign-in (same credentials and TOTP as POST /v1/auth),
 * cookie flags, CSRF on every form, expiry, sign-out, the scope switch, escaping, the CSP, and
 * that a session sees only its own account and scope.
 */
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { currentOtp } from '../../src/cryptography/totp';
import { AmountMismatch } from '../../src/models/cryptoTransaction';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const browser = consoleBrowser;

const INLINE_SCRIPT = /<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/;

describe('console sign-in and session', () => {
  it('redirects to sign-in, sets httpOnly SameSite=Strict cookies, and signs in with the API credentials', async () => {
    const a = await newAccount(api.url);
    const b = browser(api.url);
    const first = await b.go('GET', '/console');
    expect([first.status, first.location]).toEqual([303, '/console/sign-in']);
    const page = await b.go('GET', '/console/sign-in');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
    expect(page.text).not.toMatch(INLINE_SCRIPT);
    expect(page.setCookies[0]).toMatch(/^console_csrf=[^;]+; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=3600$/);

    const wrong = await b.signIn(a.email, 'not the password');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Invalid email or password');
    const ok = await b.signIn(a.email, a.password);
    expect([ok.status, ok.location]).toEqual([303, '/console']);
    const cookie = ok.setCookies.find((c) => c.startsWith('console_session='))!;
    expect(cookie).toMatch(/^console_session=[^;]+; Path=\/console; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toMatch(/Secure/);
    const overview = await b.go('GET', '/console');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('id="fig-mrr"');
    expect(overview.text).not.toMatch(INLINE_SCRIPT);
    expect(overview.text).toContain('<script src="/console/assets/chart.umd.min.js" defer></script>');
    const chart = await fetch(`${api.url}/console/assets/chart.umd.min.js`);
    expect(chart.status).toBe(200);
    expect(await chart.text()).toMatch(/Chart\.js v4\.6\.1/);
  });

  it('needs the TOTP code when two-factor is on, and refuses a wrong one', async () => {
    const a = await newAccount(api.url, { totp: true });
    const b = browser(api.url);
    const noCode = await b.signIn(a.email, a.password);
    expect(noCode.status).toBe(401);
    expect(noCode.text).toContain('Enter the code from your authenticator app');
    const code = currentOtp(a.otp_secret!);
    const bad = await b.signIn(a.email, a.password, code === '000000' ? '111111' : '000000');
    expect(bad.status).toBe(401);
    expect(bad.text).toContain('Invalid two-factor code');
    const good = await b.signIn(a.email, a.password, code);
    expect([good.status, good.location]).toEqual([303, '/console']);
  });

  it('refuses a form without its CSRF token, on sign-in and with a session', async () => {
    const a = await newAccount(api.url);
    const b = browser(api.url);
    await b.go('GET', '/console/sign-in');
    const forged = await b.go('POST', '/console/sign-in', { email: a.email, password: a.password, csrf_token: 'forged' });
    expect(forged.status).toBe(403);
    expect(b.jar.has('console_session')).toBe(false);
    await b.signIn(a.email, a.password);
    const noToken = await b.go('POST', '/console/sign-out', {});
    expect(noToken.status).toBe(403);
    expect((await b.go('GET', '/console')).status).toBe(200);
    const wrongScope = await b.go('POST', '/console/scope', { scope: 'sandbox:default', csrf_token: 'x' });
    expect(wrongScope.status).toBe(403);
  });

  it('switches between production and the sandboxes, and signs out for good', async () => {
    const a = await newAccount(api.url);
    const c = (await a.sandbox.post('/v1/customers', { email: 'sandboxed@x.io' })).body;
    const product = (await a.sandbox.post('/v1/products', { name: 'Sandbox plan' })).body;
    const price = (await a.sandbox.post('/v1/prices', { product_id: product.id, amount: 500, recurring: { interval: 'month', interval_count: 1 } })).body;
    const sub = (await a.sandbox.post('/v1/subscriptions', { customer_id: c.id, phases: [{ start_date: new Date(Date.now() - 86_400_000).toISOString(), items: [{ price_id: price.id }] }] })).body;
    const b = browser(api.url);
    await b.signIn(a.email, a.password);
    let page = await b.go('GET', '/console/subscriptions');
    expect(page.text).not.toContain(sub.id);
    const sw = await b.go('POST', '/console/scope', { scope: 'sandbox:default', csrf_token: b.csrfIn(page.text) });
    expect([sw.status, sw.location]).toEqual([303, '/console']);
    page = await b.go('GET', '/console/subscriptions');
    expect(page.text).toContain(sub.id);
    expect(page.text).toContain('sandboxed@x.io');
    const unknown = await b.go('POST', '/console/scope', { scope: 'sandbox:nope', csrf_token: b.csrfIn(page.text) });
    expect(unknown.status).toBe(422);

    const oldCookie = b.jar.get('console_session')!;
    const out = await b.go('POST', '/console/sign-out', { csrf_token: b.csrfIn(page.text) });
    expect([out.status, out.location]).toEqual([303, '/console/sign-in?signed_out=1']);
    expect(b.jar.has('console_session')).toBe(false);
    const replay = await fetch(`${api.url}/console`, { redirect: 'manual', headers: { Cookie: `console_session=${oldCookie}` } });
    expect(replay.status).toBe(303);
  });

  it('escapes what users typed and never shows another account\'s subscription', async () => {
    const a = await newAccount(api.url);
    const other = await newAccount(api.url);
    const evil = '<img src=x onerror=alert(1)>';
    const cust = (await a.api.post('/v1/customers', { email: 'x@x.io' })).body;
    const product = (await a.api.post('/v1/products', { name: evil })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 900, recurring: { interval: 'month', interval_count: 1 } })).body;
    const sub = (await a.api.post('/v1/subscriptions', { customer_id: cust.id, phases: [{ start_date: new Date().toISOString(), items: [{ price_id: price.id }] }] })).body;
    const b = browser(api.url);
    await b.signIn(a.email, a.password);
    const page = await b.go('GET', `/console/subscriptions/${sub.id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(evil);
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)>');
    expect(page.text).toContain(`/workflows/subscription-${sub.id}`);
    const q = await b.go('GET', `/console/subscriptions?customer=${encodeURIComponent('"><script>alert(1)</script>')}`);
    expect(q.text).not.toContain('<script>alert(1)</script>');

    const o = browser(api.url);
    await o.signIn(other.email, other.password);
    expect((await o.go('GET', `/console/subscriptions/${sub.id}`)).status).toBe(404);
    expect((await o.go('GET', '/console/subscriptions')).text).not.toContain(sub.id);
  });

  it('flags the transactions whose amount the chain contradicts on the overview, in the session\'s scope only', async () => {
    const a = await newAccount(api.url);
    const other = await newAccount(api.url);
    const b = browser(api.url);
    await b.signIn(a.email, a.password);
    expect((await b.go('GET', '/console')).text).not.toContain('id="amount-mismatches"');
    const hash = `0x${'ab'.repeat(32)}`;
    await AmountMismatch.create({ _id: 'trxn_flagged', account_id: a.account_id, sandbox: null, currency: 'ETH', transaction_id: hash, recorded_amount: '0.1', chain_amount: '0.2', detected_at: new Date() });
    await AmountMismatch.create({ _id: 'trxn_sandboxed', account_id: a.account_id, sandbox: 'test', currency: 'ETH', transaction_id: hash, recorded_amount: '0.3', chain_amount: '0.4', detected_at: new Date() });
    const page = (await b.go('GET', '/console')).text;
    const section = page.slice(page.indexOf('id="amount-mismatches"'));
    expect(section).toContain('trxn_flagged');
    expect(section).toMatch(/0\.1 ETH<\/td><td class="num">0\.2 ETH/);
    expect(section).toContain(hash);
    expect(page).not.toContain('trxn_sandboxed');
    const o = browser(api.url);
    await o.signIn(other.email, other.password);
    expect((await o.go('GET', '/console')).text).not.toContain('trxn_flagged');
  });

  it('serves the reports as CSV downloads in the session\'s scope', async () => {
    const a = await newAccount(api.url);
    const b = browser(api.url);
    await b.signIn(a.email, a.password);
    const csv = await b.go('GET', '/console/reports/receivables.csv');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.text.split('\r\n')[0]).toBe('as_of,bucket,invoice_id,customer_id,status,due_date,days_past_due,total_amount,amount_paid,balance');
    expect((await fetch(`${api.url}/console/reports/receivables.csv`, { redirect: 'manual' })).status).toBe(303);
  });
});

describe('console session limits', () => {
  it('ends a session at its expiry and says so; Secure cookies when PUBLIC_URL is https', async () => {
    // The sessions' clock is the test's: it stands still until moved.
    let now = Date.now();
    const short = await startTestApi({ consoleClock: () => new Date(now) }, { CONSOLE_SESSION_TTL_SECONDS: '60', PUBLIC_URL: 'https://billing.example.test' });
    try {
      const a = await newAccount(short.url);
      const b = browser(short.url);
      const ok = await b.signIn(a.email, a.password);
      expect(ok.status).toBe(303);
      expect(ok.setCookies.find((c) => c.startsWith('console_session='))).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
      expect((await b.go('GET', '/console')).status).toBe(200);
      now += 60_000 - 1; // the last millisecond of the session
      expect((await b.go('GET', '/console')).status).toBe(200);
      now += 1; // its expiry
      const after = await b.go('GET', '/console');
      expect([after.status, after.location]).toEqual([303, '/console/sign-in?expired=1']);
      expect((await b.go('GET', '/console/sign-in?expired=1')).text).toContain('Your session has ended');
    } finally {
      await short.close();
    }
  });
});
