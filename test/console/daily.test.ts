/**
 * The console's pages for the daily work (issue 26) over HTTP, on the real app and database:
 * customers (search by name or email, one customer's page), invoices (filters, one invoice's
 * page), payments (list, allocation and source), mark paid and void (confirmation, CSRF, step-up,
 * the API's service, events and errors, audit trail), names beside ids in the older tables, each
 * scoped to the session's account. Then "the customer says they paid" end to end: a claim
 * submitted through its link, approved in the console, allocated, and the invoice page shows it
 * paid with the allocation. Allocation runs inline (the test API runs without Temporal).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useApiAndBrowser } from '../support/browser';
import { useTestDatabase } from '../support/db';
import { client, newAccount } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { Event } from '../../src/models/event';
import { Customer } from '../../src/models/customer';
import { ConsoleAuditEntry } from '../../src/models/consoleAuditEntry';
import { currentOtp } from '../../src/cryptography/totp';
import { findInvoiceBySecret } from '../../src/services/billing/invoiceLinks';
import { testDependencies } from '../support/dependencies';
import { AUTH_LIMITS, AuthThrottle } from '../../src/api/auth/throttle';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const altcha = require('altcha-lib/v1') as { solveChallenge(challenge: string, salt: string, algorithm?: string, max?: number): { promise: Promise<{ number: number } | null> } };

useTestDatabase();
const env = useApiAndBrowser({ authThrottle: new AuthThrottle(AUTH_LIMITS, Date.now, async () => undefined) }, { TRUST_PROXY: 'true', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' });
const url = () => env.api().url;
type Browser = ReturnType<typeof consoleBrowser>;
type Account = Awaited<ReturnType<typeof newAccount>>;

async function signedIn(a: Account, ip: string): Promise<Browser> {
  const b = consoleBrowser(url(), ip);
  expect((await b.signIn(a.email, a.password)).status).toBe(303);
  return b;
}

/** The rows of a table by id, each as its cells' text (tags stripped). */
function rowsOf(html: string, tableId: string): string[][] {
  const table = html.slice(html.indexOf(`<table id="${tableId}"`)).split('</table>')[0]!;
  const body = table.slice(table.indexOf('<tbody>')).split('</tbody>')[0]!;
  return body
    .split('<tr>')
    .slice(1)
    .map((r) => r.split(/<td[^>]*>/).slice(1).map((c) => c.replace(/<[^>]+>/g, '').replace(/&amp;/g, '&').trim()));
}

/** A customer with a BTC address, two invoices and a payment of 100.00 USD that settles the older and pays 40.00 of the newer. */
async function customerWithHistory(a: Account, email: string, first: string, last: string) {
  const customer = (await a.api.post('/v1/customers', { email, first_name: first, last_name: last })).body;
  const wallets = (await a.api.get('/v1/wallets')).body.wallets as any[];
  const wallet = wallets.find((w) => w.owner_id === customer.id);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const older = await invoiceOf(a.api, customer.id, '60.00', '2027-01-01');
  const newer = await invoiceOf(a.api, customer.id, '200.00', '2027-02-01');
  const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() })).body;
  return { customer, wallet, btc, older, newer, tx };
}

describe('customers', () => {
  it('lists, finds by a prefix of any word of the name or email (case and accents aside), and shows one customer\'s money', async () => {
    const a = await newAccount(url());
    const { customer, wallet, btc, older, newer, tx } = await customerWithHistory(a, 'zoe.angstrom@example.com', 'Zoë', 'Ångström');
    await a.api.post('/v1/customers', { email: 'bob@smith.io', first_name: 'Bob', last_name: 'Smith' });
    const carol = (await a.api.post('/v1/customers', { email: 'carol@other.org' })).body;
    const b = await signedIn(a, '203.0.113.40');

    const list = await b.go('GET', '/console/customers');
    expect(list.status).toBe(200);
    expect(list.text).toContain('3 customers');
    expect(rowsOf(list.text, 'customers').map((r) => r[1])).toEqual(['carol@other.org', 'bob@smith.io', 'zoe.angstrom@example.com']);

    const found = async (q: string) => rowsOf((await b.go('GET', `/console/customers?q=${encodeURIComponent(q)}`)).text, 'customers').map((r) => r[1]).filter((e) => e !== 'No customer matches.');
    expect(await found('zoe')).toEqual(['zoe.angstrom@example.com']);
    expect(await found('ANGS')).toEqual(['zoe.angstrom@example.com']);
    expect(await found('Ångström Zo')).toEqual(['zoe.angstrom@example.com']);
    expect(await found('example.com')).toEqual(['zoe.angstrom@example.com']);
    expect(await found('zoe.angstrom@exa')).toEqual(['zoe.angstrom@example.com']);
    expect(await found('smi')).toEqual(['bob@smith.io']);
    expect(await found('bob smith')).toEqual(['bob@smith.io']);
    expect(await found('ca')).toEqual(['carol@other.org']);
    expect(await found('ngstrom')).toEqual([]); // a prefix of a word, not any substring
    expect(await found('smith zoe')).toEqual([]);
    const short = await b.go('GET', '/console/customers?q=z');
    expect(short.status).toBe(422);
    expect(short.text).toContain('at least two letters or digits');

    // Renamed through the API: found by the new name, no longer by the old.
    await a.api.patch(`/v1/customers/${customer.id}`, { first_name: 'Zelda' });
    expect(await found('zelda ång')).toEqual(['zoe.angstrom@example.com']);
    expect(await found('zoe')).toEqual(['zoe.angstrom@example.com']); // still in the email
    await a.api.patch(`/v1/customers/${carol.id}`, { first_name: 'Xavier' });
    expect(await found('xav')).toEqual(['carol@other.org']);
    await a.api.patch(`/v1/customers/${carol.id}`, { first_name: 'Yannick' });
    expect(await found('xav')).toEqual([]);
    expect(await found('yann')).toEqual(['carol@other.org']);

    const page = await b.go('GET', `/console/customers/${customer.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 id="customer-name">Zelda Ångström</h1>');
    expect(page.text).toContain(`<code class="id">${customer.id}</code>`);
    // Open: the newer invoice, 40.00 of it paid by what the older one left.
    expect(rowsOf(page.text, 'open-invoices')).toEqual([[newer.id, 'pending', '2027-02-01', '200.00', '40.00', '160.00']]);
    expect(page.text).toMatch(/id="customer-balance">160\.00</);
    const apiTx = (await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body;
    expect(page.text).toContain(`id="customer-credit">${apiTx.unallocated_amount}<`);
    expect(page.text).toContain(`<code class="id">${wallet.id}</code>`);
    expect(page.text).toContain(`href="https://mempool.space/address/${BTC_BECH32}"`);
    expect(page.text).toContain(`<code class="id">${btc.id}</code>`);
    const payments = rowsOf(page.text, 'customer-payments');
    expect(payments).toHaveLength(1);
    expect(payments[0]!.slice(0, 1).concat(payments[0]!.slice(2))).toEqual([tx.id, '0.002 BTC', '100.00', apiTx.unallocated_amount, 'manual entry', `${older.id}, ${newer.id}`]);
    expect(rowsOf(page.text, 'customer-subscriptions')).toEqual([['None.']]);

    // Another account sees none of it.
    const stranger = await newAccount(url());
    const s = await signedIn(stranger, '203.0.113.41');
    expect((await s.go('GET', `/console/customers/${customer.id}`)).status).toBe(404);
    expect(rowsOf((await s.go('GET', '/console/customers?q=zel')).text, 'customers')).toEqual([['No customer matches.']]);
  });

  it('gives customers stored before search terms existed their terms on the first search', async () => {
    const a = await newAccount(url());
    const c = (await a.api.post('/v1/customers', { email: 'legacy@old.example', first_name: 'Ludwig' })).body;
    await Customer.updateOne({ _id: c.id }, { $unset: { search_terms: 1 } });
    const b = await signedIn(a, '203.0.113.42');
    expect(rowsOf((await b.go('GET', '/console/customers?q=ludw')).text, 'customers').map((r) => r[1])).toEqual(['legacy@old.example']);
    expect(((await Customer.findById(c.id).lean()) as any).search_terms).toContain('lu');
  });
});

describe('invoices and payments', () => {
  it('filters invoices by status, customer and due dates; shows an invoice\'s lines, payments with explorer links and events; a payment\'s split and source', async () => {
    const a = await newAccount(url());
    const { customer, older, newer, tx } = await customerWithHistory(a, 'ines@example.com', 'Inès', 'Moreau');
    const { customer: other } = await customerWithWallet(a.api, 'otto@example.com');
    const third = await invoiceOf(a.api, other.id, '15.00', '2027-03-01');
    const b = await signedIn(a, '203.0.113.43');

    const ids = async (qs: string) => rowsOf((await b.go('GET', `/console/invoices${qs}`)).text, 'invoices').map((r) => r[0]);
    expect(await ids('')).toEqual([third.id, newer.id, older.id]);
    const all = await b.go('GET', '/console/invoices');
    expect(all.text).toContain('3 invoices');
    // Names beside ids.
    expect(rowsOf(all.text, 'invoices')[1]![1]).toBe(`Inès Moreau ines@example.com ${customer.id}`);
    expect(await ids('?status=paid')).toEqual([older.id]);
    expect(await ids('?status=pending')).toEqual([third.id, newer.id]);
    expect(await ids(`?customer=${customer.id}`)).toEqual([newer.id, older.id]);
    expect(await ids('?customer=ines')).toEqual([newer.id, older.id]);
    expect(await ids('?customer=otto%40example.com')).toEqual([third.id]);
    expect(await ids('?customer=moreau&status=pending')).toEqual([newer.id]);
    expect(await ids('?due_from=2027-01-15&due_to=2027-02-28')).toEqual([newer.id]);
    expect(await ids('?due_from=2027-02-01')).toEqual([third.id, newer.id]);
    expect(await ids('?customer=nobody')).toEqual(['No invoices match.']);
    const bad = await b.go('GET', '/console/invoices?status=void');
    expect([bad.status, bad.text.includes('Unknown status')]).toEqual([422, true]);

    const page = await b.go('GET', `/console/invoices/${older.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/id="invoice-status" class="status-paid">paid</);
    expect(page.text).toContain('id="invoice-total">60.00 USD<');
    expect(page.text).toContain('id="invoice-paid">60.00 USD<');
    expect(page.text).toContain('id="invoice-due">0.00 USD<');
    expect(page.text).toContain('Inès Moreau');
    expect(rowsOf(page.text, 'lines')).toEqual([['Service', '', '1', '60.00', '60.00']]);
    const alloc = rowsOf(page.text, 'allocations');
    expect(alloc).toHaveLength(1);
    expect(alloc[0]!.slice(0, 5)).toEqual([tx.id, '0.002 BTC', 'manual entry', `${BTC_BECH32} on mempool.space`, '60.00 (settles it)']);
    expect(page.text).toContain(`href="https://mempool.space/address/${BTC_BECH32}"`);
    expect(rowsOf(page.text, 'events').map((r) => r[1])).toEqual(['invoice.created', 'invoice.paid']);
    expect(page.text).not.toContain('id="mark-paid-link"'); // paid: no action offered
    expect((await b.go('GET', `/console/invoices/${newer.id}`)).text).toContain('id="mark-paid-link"');

    const payments = await b.go('GET', '/console/payments');
    expect(rowsOf(payments.text, 'payments').map((r) => [r[0], r[2], r[6], r[7]])).toEqual([[tx.id, `Inès Moreau ines@example.com ${customer.id}`, 'manual entry', '2']]);
    const payment = await b.go('GET', `/console/payments/${tx.id}`);
    expect(payment.text).toContain('id="payment-source">manual entry<');
    expect(rowsOf(payment.text, 'payment-allocations').map((r) => r.slice(0, 4))).toEqual([
      [older.id, 'paid', '60.00', '60.00 (settles it)'],
      [newer.id, 'pending', '200.00', '40.00'],
    ]);
    expect(payment.text).toContain('id="payment-credit-total">0.00<');

    const stranger = await newAccount(url());
    const s = await signedIn(stranger, '203.0.113.44');
    for (const path of [`/console/invoices/${older.id}`, `/console/payments/${tx.id}`, `/console/invoices/${older.id}/mark-paid`]) expect([path, (await s.go('GET', path)).status]).toEqual([path, 404]);
    expect(await (async () => rowsOf((await s.go('GET', `/console/invoices?customer=${customer.id}`)).text, 'invoices'))()).toEqual([['No invoices match.']]);
    expect(rowsOf((await s.go('GET', '/console/payments')).text, 'payments')).toEqual([['No payments yet.']]);
  });

  it('names customers in the receivables, subscriptions, lifecycle and claims pages', async () => {
    const a = await newAccount(url());
    const customer = (await a.api.post('/v1/customers', { email: 'nadia@example.com', first_name: 'Nadia', last_name: 'Kovač' })).body;
    await invoiceOf(a.api, customer.id, '25.00', '2020-01-01');
    const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 900, recurring: { interval: 'month', interval_count: 1 } })).body;
    const sub = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: new Date().toISOString(), items: [{ price_id: price.id }] }] })).body;
    const b = await signedIn(a, '203.0.113.45');
    const cell = `Nadia Kovač nadia@example.com ${customer.id}`;
    const receivables = (await b.go('GET', '/console/receivables')).text;
    expect(receivables).toContain(`<a href="/console/customers/${customer.id}">Nadia Kovač</a>`);
    expect(rowsOf((await b.go('GET', '/console/subscriptions')).text, 'subscriptions')[0]![1]).toBe(cell);
    expect((await b.go('GET', '/console/subscriptions?customer=kova')).text).toContain(sub.id);
    expect((await b.go('GET', `/console/subscriptions/${sub.id}`)).text).toContain(`<a href="/console/customers/${customer.id}">Nadia Kovač</a>`);
  });
});

async function solve(challenge: any): Promise<string> {
  const solution = await altcha.solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (!solution) throw new Error('unsolved');
  return Buffer.from(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature })).toString('base64');
}

/** Posts an action's confirmation form as the page has it (its CSRF token), with `fields` over the defaults. */
async function act(b: Browser, invoiceId: string, path: 'mark-paid' | 'void', fields: Record<string, string>) {
  const page = await b.go('GET', `/console/invoices/${invoiceId}/${path}`);
  return b.go('POST', `/console/invoices/${invoiceId}/${path}`, { csrf_token: b.csrfIn(page.text), confirm: 'yes', ...fields });
}

describe('mark paid and void', () => {
  it('confirm, ask again, and go through the API\'s service: its events, its errors on the page, an audit trail', async () => {
    const a = await newAccount(url());
    const { customer } = await customerWithWallet(a.api, 'payer@example.com');
    const inv = await invoiceOf(a.api, customer.id, '80.00', '2027-01-01');
    const other = await invoiceOf(a.api, customer.id, '30.00', '2027-01-02');
    const b = await signedIn(a, '203.0.113.50');

    // The confirmation says what will happen and holds the step-up (the password: no TOTP here) and a required tick.
    const confirm = await b.go('GET', `/console/invoices/${inv.id}/mark-paid`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('invoice.updated and invoice.paid are sent to your webhook endpoints');
    const form = confirm.text.slice(confirm.text.indexOf('id="mark-paid-form"')).split('</form>')[0]!;
    expect(form).toContain('name="csrf_token"');
    expect(form).toMatch(/name="password" type="password" autocomplete="current-password" required/);
    expect(form).toMatch(/type="checkbox" name="confirm" value="yes" required/);

    for (const csrf_token of [undefined, 'forged']) {
      const res = await b.go('POST', `/console/invoices/${inv.id}/mark-paid`, { ...(csrf_token ? { csrf_token } : {}), confirm: 'yes', password: a.password });
      expect(res.status).toBe(403);
    }
    const unconfirmed = await act(b, inv.id, 'mark-paid', { password: a.password, confirm: '' });
    expect([unconfirmed.status, unconfirmed.text.includes('Tick the confirmation box to confirm; nothing was changed.')]).toEqual([422, true]);
    const wrong = await act(b, inv.id, 'mark-paid', { password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toMatch(/id="error" role="alert">Wrong password; nothing was changed\./);
    expect((await a.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('pending');
    expect(await ConsoleAuditEntry.countDocuments({ object_id: inv.id })).toBe(0);

    const done = await act(b, inv.id, 'mark-paid', { password: a.password });
    expect([done.status, done.location]).toEqual([303, `/console/invoices/${inv.id}?done=paid`]);
    const paid = (await a.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(paid.status).toBe('paid');
    // The events PATCH /v1/invoices/:id writes, with the invoice as the API presents it.
    for (const name of ['invoice.updated', 'invoice.paid']) {
      const events = await Event.find({ event: name, 'payload.id': inv.id }).lean<{ payload: unknown }[]>();
      expect([name, events.map((e) => e.payload)]).toEqual([name, [{ ...paid, object: 'invoice' }]]);
    }

    // Again: refused (the console acts on open invoices only), nothing written, the refusal audited.
    const again = await act(b, inv.id, 'mark-paid', { password: a.password });
    expect(again.status).toBe(422);
    expect(again.text).toContain('The invoice is already paid; nothing was changed.');
    expect(await Event.countDocuments({ 'payload.id': inv.id, event: { $in: ['invoice.updated', 'invoice.paid'] } })).toBe(2);

    // Void the other one, then marking it paid is refused with the API's own error.
    expect((await act(b, other.id, 'void', { password: a.password })).status).toBe(303);
    const voided = (await a.api.get(`/v1/invoices/${other.id}`)).body;
    expect(voided.status).toBe('canceled');
    expect((await Event.find({ event: 'invoice.updated', 'payload.id': other.id }).lean<{ payload: unknown }[]>()).map((e) => e.payload)).toEqual([{ ...voided, object: 'invoice' }]);
    expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': other.id })).toBe(0);
    const revive = await act(b, other.id, 'mark-paid', { password: a.password });
    expect(revive.status).toBe(422);
    expect(revive.text).toContain('A canceled invoice cannot change status; nothing was changed.');
    const api = await a.api.patch(`/v1/invoices/${other.id}`, { status: 'paid' });
    expect([api.status, api.body.error.message]).toEqual([422, 'A canceled invoice cannot change status']);

    const audit = await ConsoleAuditEntry.find({ account_id: a.account_id }).sort({ at: 1, _id: 1 }).lean<any[]>();
    expect(audit.map((e) => [e.object_id, e.action, e.outcome, e.detail, e.user_email, e.client_address])).toEqual([
      [inv.id, 'invoice.mark_paid', 'paid', null, a.email, '203.0.113.50'],
      [inv.id, 'invoice.mark_paid', 'refused', 'The invoice is already paid', a.email, '203.0.113.50'],
      [other.id, 'invoice.void', 'voided', null, a.email, '203.0.113.50'],
      [other.id, 'invoice.mark_paid', 'refused', 'A canceled invoice cannot change status', a.email, '203.0.113.50'],
    ]);
    // Shown on the invoice's page: when, who, what, outcome, from where.
    const page = await b.go('GET', `/console/invoices/${inv.id}?done=paid`);
    expect(page.text).toContain('The invoice was marked paid.');
    const trail = page.text.slice(page.text.indexOf('id="invoice-audit"'));
    expect(trail).toContain(`${new Date(audit[0].at).toISOString()}: ${a.email} - mark paid - paid - from 203.0.113.50`);
    expect(trail).toContain('mark paid - refused: The invoice is already paid - from 203.0.113.50');

    // Another account: 404, nothing done or audited.
    const third = await invoiceOf(a.api, customer.id, '10.00', '2027-01-03');
    const stranger = await newAccount(url());
    const s = await signedIn(stranger, '203.0.113.51');
    const token = s.csrfIn((await s.go('GET', '/console')).text);
    for (const path of ['mark-paid', 'void']) {
      const res = await s.go('POST', `/console/invoices/${third.id}/${path}`, { csrf_token: token, confirm: 'yes', password: stranger.password });
      expect(res.status).toBe(404);
    }
    expect((await a.api.get(`/v1/invoices/${third.id}`)).body.status).toBe('pending');
    expect(await ConsoleAuditEntry.countDocuments({ object_id: third.id })).toBe(0);
  });

  it('with TOTP: the code that signed in is refused, the next one voids', async () => {
    const a = await newAccount(url(), { totp: true });
    const { customer } = await customerWithWallet(a.api, 'totp@example.com');
    const inv = await invoiceOf(a.api, customer.id, '12.00', '2027-01-01');
    const b = consoleBrowser(url(), '203.0.113.52');
    const signedAt = Date.now();
    const code = currentOtp(a.otp_secret!, signedAt);
    expect((await b.signIn(a.email, a.password, code)).status).toBe(303);
    const confirm = await b.go('GET', `/console/invoices/${inv.id}/void`);
    expect(confirm.text).toMatch(/name="otp_attempt" inputmode="numeric"/);
    expect(confirm.text).not.toContain('name="password"');
    const refused = await act(b, inv.id, 'void', { otp_attempt: code });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain('Invalid or already used two-factor code');
    expect((await act(b, inv.id, 'void', { otp_attempt: currentOtp(a.otp_secret!, signedAt + 30_000) })).status).toBe(303);
    expect((await a.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('canceled');
  });
});

describe('the invoice\'s customer links', () => {
  it('shows the hosted page and PDF links, and rotates them: the old secret opens nothing, the API shows the new ones, audited', async () => {
    const a = await newAccount(url());
    const { customer } = await customerWithWallet(a.api, 'links@example.com');
    const inv = await invoiceOf(a.api, customer.id, '20.00', '2027-01-01');
    const b = await signedIn(a, '203.0.113.70');
    const before = (await a.api.get(`/v1/invoices/${inv.id}`)).body;
    const page = await b.go('GET', `/console/invoices/${inv.id}`);
    expect(page.text).toContain(`id="hosted-invoice-link" href="${before.hosted_invoice_url}"`);
    expect(page.text).toContain(`id="invoice-pdf-link" href="${before.invoice_pdf}"`);
    const oldSecret = before.hosted_invoice_url.split('/invoice/')[1];
    expect((await findInvoiceBySecret(testDependencies(), oldSecret))?._id).toBe(inv.id);

    const unticked = await b.go('POST', `/console/invoices/${inv.id}/links`, { csrf_token: b.csrfIn(page.text) });
    expect(unticked.status).toBe(422);
    expect((await b.go('POST', `/console/invoices/${inv.id}/links`, { confirm: 'yes' })).status).toBe(403);
    const rotated = await b.go('POST', `/console/invoices/${inv.id}/links`, { csrf_token: b.csrfIn(page.text), confirm: 'yes' });
    expect([rotated.status, rotated.location]).toEqual([303, `/console/invoices/${inv.id}?done=rotated`]);
    const after = (await a.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(after.hosted_invoice_url).not.toBe(before.hosted_invoice_url);
    expect(await findInvoiceBySecret(testDependencies(), oldSecret)).toBeNull();
    expect((await findInvoiceBySecret(testDependencies(), after.hosted_invoice_url.split('/invoice/')[1]))?._id).toBe(inv.id);
    const shown = await b.go('GET', `/console/invoices/${inv.id}?done=rotated`);
    expect(shown.text).toContain(`href="${after.hosted_invoice_url}"`);
    expect(shown.text).toContain('rotate links - rotated - from 203.0.113.70');

    const stranger = await newAccount(url());
    const s = await signedIn(stranger, '203.0.113.71');
    const token = s.csrfIn((await s.go('GET', '/console')).text);
    expect((await s.go('POST', `/console/invoices/${inv.id}/links`, { csrf_token: token, confirm: 'yes' })).status).toBe(404);
    expect((await a.api.get(`/v1/invoices/${inv.id}`)).body.hosted_invoice_url).toBe(after.hosted_invoice_url);
  });
});

describe('the customer says they paid', () => {
  it('a claim submitted through its link, approved in the console, allocated: the invoice page shows it paid with the allocation', async () => {
    const a = await newAccount(url());
    const customer = (await a.api.post('/v1/customers', { email: 'claimant@example.com', first_name: 'Claire', last_name: 'Mant' })).body;
    const wallet = ((await a.api.get('/v1/wallets')).body.wallets as any[]).find((w) => w.owner_id === customer.id);
    await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
    const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id })).body;
    const secret = link.link.split('/pay/')[1];
    const challenge = (await client(url()).get(`/v1/public/payment_claim_links/${secret}`)).body.challenge;
    const claim = (await client(url()).post(`/v1/public/payment_claim_links/${secret}/claims`, { transaction_id: txHash(), amount: '0.002', currency: 'BTC', to_address: BTC_BECH32, verification: await solve(challenge) })).body;

    const b = await signedIn(a, '203.0.113.60');
    const queue = await b.go('GET', '/console/claims');
    expect(queue.text).toContain(`<a href="/console/customers/${customer.id}">Claire Mant</a>`);
    const before = await b.go('GET', `/console/invoices/${invoice.id}`);
    expect(before.text).toContain('id="invoice-due">100.00 USD<');
    const approved = await b.go('POST', `/console/claims/${claim.id}/approval`, { csrf_token: b.csrfIn(queue.text), confirm: 'yes', password: a.password });
    expect(approved.status).toBe(303);
    const txId = (await a.api.get(`/v1/crypto_payment_claims/${claim.id}`)).body.crypto_transaction_id;

    const page = await b.go('GET', `/console/invoices/${invoice.id}`);
    expect(page.text).toMatch(/id="invoice-status" class="status-paid">paid</);
    expect(page.text).toContain('id="invoice-paid">100.00 USD<');
    expect(page.text).toContain('id="invoice-due">0.00 USD<');
    expect(rowsOf(page.text, 'allocations').map((r) => r.slice(0, 5))).toEqual([[txId, '0.002 BTC', 'approved claim', `${BTC_BECH32} on mempool.space`, '100.00 (settles it)']]);
    expect(rowsOf(page.text, 'events').map((r) => r[1])).toEqual(['invoice.created', 'invoice.paid']);
    const payment = await b.go('GET', `/console/payments/${txId}`);
    expect(payment.text).toContain('id="payment-source">approved claim<');
    expect(payment.text).toContain(`<code class="id">${claim.id}</code>`);
    expect(rowsOf(payment.text, 'payment-allocations').map((r) => r.slice(0, 4))).toEqual([[invoice.id, 'paid', '100.00', '100.00 (settles it)']]);

    // And the PDF in hand, from the invoice page's link: paid, nothing left to pay.
    const pdfHref = /id="invoice-pdf-link" href="([^"]+)"/.exec(page.text)![1];
    const pdf = await fetch(url() + new URL(pdfHref).pathname);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const dir = mkdtempSync(join(tmpdir(), 'console-pdf-'));
    try {
      writeFileSync(join(dir, 'invoice.pdf'), Buffer.from(await pdf.arrayBuffer()));
      const text = execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', join(dir, 'invoice.pdf'), '-'], { encoding: 'utf8' });
      expect(text).toContain(invoice.id);
      expect(text).toContain('Claire Mant');
      expect(text).toMatch(/Amount due\s+0\.00/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
