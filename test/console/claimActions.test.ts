/**
 * Approve and reject in the console's claims queue (issue 26): CSRF and an explicit confirmation
 * on each form, a step-up before any decision (the password again, or a fresh TOTP code: the one
 * that signed in is refused, the next accepted), failures throttled like sign-ins, the same
 * service as the API (transaction, allocation, events), an audit entry per decision shown on the
 * page, another account's claim a 404. Claims are submitted through the public link flow.
 */
import { axeViolations } from '../support/paymentPageChecks';
import { useApiAndBrowser } from '../support/browser';
import { useTestDatabase } from '../support/db';
import { client, newAccount } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { Event } from '../../src/models/event';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';
import { ConsoleAuditEntry } from '../../src/models/consoleAuditEntry';
import { currentOtp } from '../../src/cryptography/totp';
import { AUTH_LIMITS, AuthThrottle } from '../../src/api/auth/throttle';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const altcha = require('altcha-lib/v1') as { solveChallenge(challenge: string, salt: string, algorithm?: string, max?: number): { promise: Promise<{ number: number } | null> } };
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

useTestDatabase();
// Throttle pauses are not slept (the lock still applies); X-Forwarded-For from loopback believed, so each test is its own client.
const env = useApiAndBrowser({ authThrottle: new AuthThrottle(AUTH_LIMITS, Date.now, async () => undefined) }, { TRUST_PROXY: 'true', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' });
const url = () => env.api().url;

async function solve(challenge: any): Promise<string> {
  const solution = await altcha.solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (!solution) throw new Error('unsolved');
  return Buffer.from(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature })).toString('base64');
}

/** An account (TOTP on or off) with a BTC address and `n` pending claims submitted through a link, as a customer would. */
async function accountWithClaims(n = 1, opts: { totp?: boolean } = {}) {
  const a = await newAccount(url(), opts);
  const { customer, wallet } = await customerWithWallet(a.api);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: n })).body;
  const secret = link.link.split('/pay/')[1];
  const claims: any[] = [];
  for (let i = 0; i < n; i++) {
    const challenge = (await client(url()).get(`/v1/public/payment_claim_links/${secret}`)).body.challenge;
    const res = await client(url()).post(`/v1/public/payment_claim_links/${secret}/claims`, { transaction_id: txHash(), amount: '0.002', currency: 'BTC', to_address: BTC_BECH32, verification: await solve(challenge) });
    expect(res.status).toBe(201);
    claims.push(res.body);
  }
  return { a, customer, btc, claims };
}

type Browser = ReturnType<typeof consoleBrowser>;
/** Posts a claim's approve or reject form as the page has it (its CSRF token), with `fields` over the defaults. */
async function decide(b: Browser, claimId: string, path: 'approval' | 'rejection', fields: Record<string, string>) {
  const page = await b.go('GET', '/console/claims');
  return b.go('POST', `/console/claims/${claimId}/${path}`, { csrf_token: b.csrfIn(page.text), confirm: 'yes', ...fields });
}

const claimOf = async (a: { api: ReturnType<typeof client> }, id: string) => (await a.api.get(`/v1/crypto_payment_claims/${id}`)).body;

describe('deciding claims in the console', () => {
  it('approval with the password again records and allocates the payment exactly as the API does, audited; a second approval is refused', async () => {
    const { a, customer, btc, claims } = await accountWithClaims();
    const claim = claims[0];
    const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const b = consoleBrowser(url(), '203.0.113.10');
    expect((await b.signIn(a.email, a.password)).status).toBe(303);

    // The queue has both forms, each with the CSRF token, a password field (no TOTP here) and a required confirmation.
    const queue = await b.go('GET', '/console/claims');
    const row = queue.text.slice(queue.text.indexOf(`id="claim-${claim.id}"`));
    for (const path of ['approval', 'rejection']) {
      const form = row.slice(row.indexOf(`action="/console/claims/${claim.id}/${path}"`)).split('</form>')[0]!;
      expect(form).toContain('name="csrf_token"');
      expect(form).toMatch(/name="password" type="password" autocomplete="current-password" required/);
      expect(form).toMatch(/type="checkbox" name="confirm" value="yes" required/);
      expect(form).not.toContain('otp_attempt');
    }
    expect(row).toContain('name="reason"');

    // Not confirmed, or the wrong password: refused with a message, nothing changed or audited.
    const unconfirmed = await decide(b, claim.id, 'approval', { password: a.password, confirm: '' });
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.text).toContain('Tick the confirmation box');
    const wrong = await decide(b, claim.id, 'approval', { password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toMatch(/id="error" role="alert">Wrong password; nothing was changed\./);
    expect((await claimOf(a, claim.id)).status).toBe('pending');
    expect(await ConsoleAuditEntry.countDocuments({ object_id: claim.id })).toBe(0);

    const approved = await decide(b, claim.id, 'approval', { password: a.password });
    expect([approved.status, approved.location]).toEqual([303, '/console/claims?decided=approved']);

    // Through the API: approved by this user, a manual_entry transaction allocated to the invoice, the invoice paid.
    const after = await claimOf(a, claim.id);
    expect(after).toMatchObject({ status: 'approved', approved_by_id: a.user_id, rejection_reason: null });
    const txs = (await a.api.get('/v1/crypto_transactions')).body;
    const listed = txs.crypto_transactions as any[];
    expect(listed.map((t) => t.id)).toEqual([after.crypto_transaction_id]);
    const tx = (await a.api.get(`/v1/crypto_transactions/${after.crypto_transaction_id}`)).body;
    expect(tx).toMatchObject({ transaction_source: 'manual_entry', amount: '0.002', currency: 'BTC', to_address_id: btc.id, transaction_id: claim.transaction_id, usd_value: '100.00' });
    expect(tx.allocations).toEqual([expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })]);
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    // The event is the API's: its payload is the claim as the API presents it.
    const events = await Event.find({ event: 'payment_claim.approved', 'payload.id': claim.id }).lean<{ payload: unknown }[]>();
    expect(events.map((e) => e.payload)).toEqual([after]);
    expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);

    // Again: refused, nothing recorded twice; the refusal is audited as such.
    const again = await b.go('POST', `/console/claims/${claim.id}/approval`, { csrf_token: b.csrfIn(queue.text), confirm: 'yes', password: a.password });
    expect(again.status).toBe(422);
    expect(again.text).toContain('Payment claim is not pending; nothing was changed.');
    expect(await CryptoTransaction.countDocuments({ payment_claim_id: claim.id })).toBe(1);
    expect(await Event.countDocuments({ event: 'payment_claim.approved', 'payload.id': claim.id })).toBe(1);
    expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);

    const audit = await ConsoleAuditEntry.find({ object_id: claim.id }).sort({ at: 1 }).lean<any[]>();
    expect(audit).toEqual([
      expect.objectContaining({ account_id: a.account_id, sandbox: null, user_id: a.user_id, user_email: a.email, action: 'payment_claim.approve', object_type: 'payment_claim', outcome: 'approved', reason: null, client_address: '203.0.113.10' }),
      expect.objectContaining({ action: 'payment_claim.approve', outcome: 'refused', detail: 'Payment claim is not pending', client_address: '203.0.113.10' }),
    ]);
    // Shown on the page: who, when, what, from where.
    const page = await b.go('GET', '/console/claims?decided=approved');
    expect(page.text).toContain('The claim was approved.');
    const recent = page.text.slice(page.text.indexOf('id="recent-decisions"'));
    expect(recent).toContain(`${new Date(audit[0].at).toISOString()}: ${a.email} - approve payment claim ${claim.id} - approved - from 203.0.113.10`);
    expect(recent).toContain(`approve payment claim ${claim.id} - refused: Payment claim is not pending - from 203.0.113.10`);
    expect(page.text).not.toContain(`id="claim-${claim.id}"`);
  });

  it('rejection with a reason, seen through the API with its event; the reason is audited; then the claim cannot be approved', async () => {
    const { a, claims } = await accountWithClaims(2);
    const b = consoleBrowser(url(), '203.0.113.11');
    await b.signIn(a.email, a.password);
    const res = await decide(b, claims[0].id, 'rejection', { password: a.password, reason: 'No such payment on chain' });
    expect([res.status, res.location]).toEqual([303, '/console/claims?decided=rejected']);
    const rejected = await claimOf(a, claims[0].id);
    expect(rejected).toMatchObject({ status: 'rejected', rejection_reason: 'No such payment on chain', approved_by_id: a.user_id, crypto_transaction_id: null });
    const events = await Event.find({ event: 'payment_claim.rejected', 'payload.id': claims[0].id }).lean<{ payload: unknown }[]>();
    expect(events.map((e) => e.payload)).toEqual([rejected]);
    expect(await ConsoleAuditEntry.findOne({ object_id: claims[0].id }).lean()).toMatchObject({ action: 'payment_claim.reject', outcome: 'rejected', reason: 'No such payment on chain', client_address: '203.0.113.11' });

    const approval = await decide(b, claims[0].id, 'approval', { password: a.password });
    expect(approval.status).toBe(422);
    expect((await claimOf(a, claims[0].id)).status).toBe('rejected');
    expect(await CryptoTransaction.countDocuments({ payment_claim_id: claims[0].id })).toBe(0);
    // The other claim is still pending and in the queue, its refused neighbour's decision listed below.
    const page = await b.go('GET', '/console/claims');
    expect(page.text).toContain(`id="claim-${claims[1].id}"`);
    expect(page.text).toContain(`reject payment claim ${claims[0].id} - rejected (reason: No such payment on chain) - from 203.0.113.11`);
  });

  it('with TOTP: the code that signed in is refused, the next one accepted; the form asks for a code, not the password', async () => {
    const { a, claims } = await accountWithClaims(1, { totp: true });
    const secret = a.otp_secret!;
    const b = consoleBrowser(url(), '203.0.113.12');
    const signedAt = Date.now();
    const code = currentOtp(secret, signedAt);
    expect((await b.signIn(a.email, a.password, code)).status).toBe(303);
    const page = await b.go('GET', '/console/claims');
    const row = page.text.slice(page.text.indexOf(`id="claim-${claims[0].id}"`));
    expect(row).toMatch(/name="otp_attempt" inputmode="numeric" autocomplete="one-time-code" pattern="\[0-9\]\{6\}" required/);
    expect(row).not.toContain('name="password"');

    for (const otp_attempt of [code, '', 'abcdef']) {
      const refused = await decide(b, claims[0].id, 'approval', { otp_attempt, password: a.password });
      expect(refused.status).toBe(401);
      expect(refused.text).toContain('Invalid or already used two-factor code');
    }
    expect((await claimOf(a, claims[0].id)).status).toBe('pending');
    expect(await ConsoleAuditEntry.countDocuments({ object_id: claims[0].id })).toBe(0);

    // The next step's code (inside the one-step drift window for the next 60 s).
    const next = currentOtp(secret, signedAt + 30_000);
    const ok = await decide(b, claims[0].id, 'approval', { otp_attempt: next });
    expect(ok.status).toBe(303);
    expect((await claimOf(a, claims[0].id)).status).toBe('approved');
  });

  it('refuses a form without the CSRF token, another account\'s claim (404), and throttles wrong passwords like sign-ins', async () => {
    const { a, claims } = await accountWithClaims(1);
    const b = consoleBrowser(url(), '203.0.113.13');
    await b.signIn(a.email, a.password);
    for (const csrf_token of [undefined, 'forged']) {
      const res = await b.go('POST', `/console/claims/${claims[0].id}/approval`, { ...(csrf_token ? { csrf_token } : {}), confirm: 'yes', password: a.password });
      expect(res.status).toBe(403);
    }

    const stranger = await newAccount(url());
    const s = consoleBrowser(url(), '203.0.113.14');
    await s.signIn(stranger.email, stranger.password);
    for (const path of ['approval', 'rejection'] as const) {
      const res = await decide(s, claims[0].id, path, { password: stranger.password, reason: 'not mine' });
      expect(res.status).toBe(404);
    }
    expect((await claimOf(a, claims[0].id)).status).toBe('pending');
    expect(await ConsoleAuditEntry.countDocuments({ object_id: claims[0].id })).toBe(0);
    expect(await Event.countDocuments({ 'payload.id': claims[0].id, event: { $in: ['payment_claim.approved', 'payment_claim.rejected'] } })).toBe(0);

    // Wrong passwords past the free allowance lock this browser out for a while (429, Retry-After), as failed sign-ins do.
    const statuses: number[] = [];
    for (let i = 0; i < 8 && !statuses.includes(429); i++) statuses.push((await decide(b, claims[0].id, 'approval', { password: `wrong ${i}` })).status);
    expect(statuses).toContain(429);
    expect(statuses.filter((st) => st !== 429).every((st) => st === 401)).toBe(true);
    const locked = await decide(b, claims[0].id, 'approval', { password: a.password });
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(locked.text).toContain('Too many sign-in attempts');
    expect((await claimOf(a, claims[0].id)).status).toBe('pending');
  });

  it('reads well with the forms at desktop and phone widths (axe-core: nothing serious), and approves in Chromium', async () => {
    const { a, claims } = await accountWithClaims(2);
    const context = await env.browser().newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      await page.goto(`${url()}/console/sign-in`);
      await page.fill('#email', a.email);
      await page.fill('#password', a.password);
      await page.click('#sign-in');
      await page.waitForURL(`${url()}/console`);
      await page.goto(`${url()}/console/claims`);
      // Submitting without ticking the box is stopped by the browser (required), without a request.
      await page.fill(`#approve-${claims[0].id}-step-up`, a.password);
      await page.click(`#approve-${claims[0].id}-submit`);
      expect(page.url()).toBe(`${url()}/console/claims`);
      await page.check(`#approve-${claims[0].id} input[name=confirm]`);
      await page.click(`#approve-${claims[0].id}-submit`);
      await page.waitForURL(`${url()}/console/claims?decided=approved`);
      expect(await page.textContent('#notice')).toBe('The claim was approved.');
      expect(await page.locator('section.claim').count()).toBe(1);
      expect(await page.textContent('#recent-decisions')).toContain(`approve payment claim ${claims[0].id} - approved`);
      for (const [name, size] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(size);
        const serious = await axeViolations(page);
        expect([name, serious]).toEqual([name, []]);
        const wide = await page.evaluate(() =>
          Array.from(document.querySelectorAll('body *'))
            .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
            .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className}`),
        );
        expect([name, wide]).toEqual([name, []]);
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
