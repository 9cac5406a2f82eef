/**
 * Invoices customers can open, pay and file, over HTTP: each invoice's unguessable links in the
 * API and its events, the hosted page and its public endpoint, the PDF read back with Debian's
 * `pdftotext` (installed by `npm test`), its cache, rotation, scoping and the public limits.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { testDependencies } from '../support/dependencies';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { Event, EventDoc } from '../../src/models/event';
import { Invoice } from '../../src/models/invoice';
import { InvoiceLink, InvoiceLinkSecret, InvoicePdf } from '../../src/models/invoiceDocument';
import { rotateInvoiceLinks } from '../../src/services/billing/invoiceDocuments';
import { linkSecretKey } from '../../src/services/crypto/paymentClaimLinks';
import { randomBytes } from 'node:crypto';

const PUBLIC_URL = 'https://billing.example.test';
useTestDatabase();
let api: TestApi;
const tmp = mkdtempSync(join(tmpdir(), 'invoice-pdf-'));
beforeAll(async () => {
  api = await startTestApi({}, { PUBLIC_URL, PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(async () => {
  await api.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A link of the API (on PUBLIC_URL) as a path on the test server. */
const local = (url: string) => {
  expect(url.startsWith(`${PUBLIC_URL}/invoice/`)).toBe(true);
  return url.slice(PUBLIC_URL.length);
};
const anon = () => client(api.url);

async function getPdf(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(api.url + path, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

let pdfSeq = 0;
/** The PDF's text as pdftotext reads it (layout kept, so a label and its value share a line). */
function pdfText(bytes: Buffer): string {
  const file = join(tmp, `${++pdfSeq}.pdf`);
  writeFileSync(file, bytes);
  return execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
}

/** An account named `name` with a customer (with a BTC address of its own) and an invoice of two lines. */
async function setUp(opts: { name?: string; first?: string; last?: string; email?: string; productName?: string } = {}) {
  const a = await newAccount(api.url);
  if (opts.name) expect((await a.api.patch(`/v1/accounts/${a.account_id}`, { name: opts.name })).status).toBe(200);
  const { customer, wallet } = await customerWithWallet(a.api, opts.email ?? 'payer@x.io');
  if (opts.first || opts.last) await a.api.patch(`/v1/customers/${customer.id}`, { first_name: opts.first, last_name: opts.last });
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const product = (await a.api.post('/v1/products', { name: opts.productName ?? 'Consulting' })).body;
  const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 2500 })).body;
  const created = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2031-03-01', line_items: [{ price_id: price.id, quantity: 3 }, { price_id: price.id, amount: '45.50' }] });
  expect(created.status).toBe(201);
  return { a, customer, wallet, btc, price, invoice: created.body };
}

describe('links in the API', () => {
  it('every invoice shows hosted_invoice_url and invoice_pdf on PUBLIC_URL, the same in its get, its list and its events', async () => {
    const { a, invoice } = await setUp();
    expect(invoice.hosted_invoice_url).toMatch(new RegExp(`^${PUBLIC_URL}/invoice/${invoice.id}\\.[A-Za-z0-9_-]{43}$`));
    expect(invoice.invoice_pdf).toBe(`${invoice.hosted_invoice_url}/pdf`);
    const got = (await a.api.get(`/v1/invoices/${invoice.id}`)).body;
    expect([got.hosted_invoice_url, got.invoice_pdf]).toEqual([invoice.hosted_invoice_url, invoice.invoice_pdf]);
    const listed = (await a.api.get('/v1/invoices')).body.invoices.find((i: { id: string }) => i.id === invoice.id);
    expect([listed.hosted_invoice_url, listed.invoice_pdf]).toEqual([invoice.hosted_invoice_url, invoice.invoice_pdf]);
    await a.api.patch(`/v1/invoices/${invoice.id}`, { status: 'paid' });
    const events = await Event.find({ 'payload.id': invoice.id }).lean<EventDoc[]>();
    expect(events.map((e) => e.event).sort()).toEqual(['invoice.created', 'invoice.paid', 'invoice.updated']);
    for (const e of events) expect([e.payload.hosted_invoice_url, e.payload.invoice_pdf]).toEqual([invoice.hosted_invoice_url, invoice.invoice_pdf]);
    // Derived, not stored: made, read, listed and sent without a write of its own.
    expect(await InvoiceLink.countDocuments({ _id: invoice.id })).toBe(0);
    expect(await InvoiceLinkSecret.countDocuments({ invoice_id: invoice.id })).toBe(0);
  });

  it('a random secret made before secrets were derived keeps opening its invoice until rotated, then the new one does', async () => {
    const { a, invoice } = await setUp();
    const deps = testDependencies({ env: { PUBLIC_URL } });
    // As links were made before: a random secret on the link, and its lookup by SHA-256.
    const legacy = randomBytes(32).toString('base64url');
    await InvoiceLink.create({ _id: invoice.id, secret: legacy });
    await InvoiceLinkSecret.create({ _id: linkSecretKey(legacy), invoice_id: invoice.id });
    const got = (await a.api.get(`/v1/invoices/${invoice.id}`)).body;
    expect(got.hosted_invoice_url).toBe(`${PUBLIC_URL}/invoice/${legacy}`);
    expect((await a.api.get('/v1/invoices')).body.invoices.find((i: { id: string }) => i.id === invoice.id).hosted_invoice_url).toBe(got.hosted_invoice_url);
    expect((await anon().get(`/invoice/${legacy}`)).status).toBe(200);
    // While the random one is current, the derived one of generation 0 opens nothing.
    expect((await anon().get(local(invoice.hosted_invoice_url))).status).toBe(404);

    const rotated = await rotateInvoiceLinks(deps, { accountId: a.account_id, sandbox: null }, invoice.id);
    expect(rotated.hosted_invoice_url).toMatch(new RegExp(`^${PUBLIC_URL}/invoice/${invoice.id}\\.`));
    expect((await anon().get(`/invoice/${legacy}`)).status).toBe(404);
    expect(await InvoiceLinkSecret.countDocuments({ invoice_id: invoice.id })).toBe(0);
    expect((await anon().get(local(rotated.hosted_invoice_url))).status).toBe(200);
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.hosted_invoice_url).toBe(rotated.hosted_invoice_url);
    // Its link document goes with the invoice.
    expect((await a.api.del(`/v1/invoices/${invoice.id}`)).status).toBe(204);
    expect(await InvoiceLink.countDocuments({ _id: invoice.id })).toBe(0);
    expect((await anon().get(local(rotated.hosted_invoice_url))).status).toBe(404);
  });
});

describe('the hosted page', () => {
  it('shows the lines, totals, status and what is due, and its public endpoint the same', async () => {
    const { invoice, btc } = await setUp({ name: 'Åcme Studio', first: 'Zoë', last: 'Ångström', email: 'zoe@x.io' });
    const res = await fetch(api.url + local(invoice.hosted_invoice_url));
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toContain(`Invoice ${invoice.id}`);
    expect(html).toContain('Åcme Studio');
    expect(html).toContain('Zoë Ångström');
    expect(html).toContain('zoe@x.io');
    expect(html).toContain('<dt>Status</dt><dd id="invoice-status">Open</dd>');
    expect(html).toContain('<td class="num">3</td><td class="num">25.00 USD</td><td class="num">75.00 USD</td>');
    expect(html).toContain('<td class="num">1</td><td class="num">45.50 USD</td><td class="num">45.50 USD</td>');
    expect(html).toContain('<dt>Total</dt><dd>120.50 USD</dd>');
    expect(html).toContain('<dd id="amount-remaining">120.50 USD</dd>');
    expect(html).toContain('Amount to pay: <strong><span id="amount-due">120.50</span> USD</strong>');
    expect(html).toContain(btc.address);
    expect(html).toContain(`href="${local(invoice.invoice_pdf)}"`);
    expect(html).not.toContain('older invoice');

    const secret = local(invoice.hosted_invoice_url).split('/')[2];
    const pub = await anon().get(`/v1/public/invoices/${secret}`);
    expect(pub.status).toBe(200);
    expect(pub.body).toMatchObject({ id: invoice.id, status: 'pending', usable: true, total_amount: '120.50', amount_remaining: '120.50', amount_due: '120.50', account: { name: 'Åcme Studio' } });
    expect(pub.body.invoices.map((i: { id: string }) => i.id)).toEqual([invoice.id]);
    // 120.50 USD at the fixed oracle's BTC price, rounded up to the satoshi.
    expect(pub.body.pay_to).toEqual([expect.objectContaining({ currency: 'BTC', address: BTC_BECH32 })]);
    expect(pub.body.pay_to[0].payment_uri).toBe(`bitcoin:${BTC_BECH32}?amount=${pub.body.pay_to[0].amount}`);
  });

  it('with an older open invoice, says so and asks for both balances; paying them settles this one', async () => {
    const { a, customer, btc, invoice } = await setUp();
    const older = await invoiceOf(a.api, customer.id, '30.00', '2031-01-15');
    const later = await invoiceOf(a.api, customer.id, '10.00', '2031-06-01');
    // Overdue is open too; a paid or canceled one is no longer asked for.
    await Invoice.updateOne({ _id: older.id }, { $set: { status: 'overdue' } });
    const paid = await invoiceOf(a.api, customer.id, '20.00', '2031-01-01');
    const voided = await invoiceOf(a.api, customer.id, '25.00', '2031-01-02');
    await Invoice.updateOne({ _id: paid.id }, { $set: { status: 'paid', amount_paid: '20.00' } });
    await Invoice.updateOne({ _id: voided.id }, { $set: { status: 'canceled' } });
    const secret = local(invoice.hosted_invoice_url).split('/')[2];
    const pub = (await anon().get(`/v1/public/invoices/${secret}`)).body;
    expect(pub.amount_remaining).toBe('120.50');
    expect(pub.amount_due).toBe('150.50');
    // Oldest first, this one last; the later one is not asked for.
    expect(pub.invoices.map((i: { id: string }) => i.id)).toEqual([older.id, invoice.id]);
    const html = await (await fetch(api.url + local(invoice.hosted_invoice_url))).text();
    expect(html).toContain('An older invoice is still open');
    expect(html).toContain(`<tr data-invoice-id="${older.id}">`);
    expect(html).toContain('Total to pay</th><td class="num"><span id="amount-due">150.50</span> USD');
    expect(html).not.toContain(later.id);
    // The later invoice's page asks for all three.
    expect((await anon().get(`/v1/public/invoices/${local(later.hosted_invoice_url).split('/')[2]}`)).body.amount_due).toBe('160.50');

    // Paying what the page asks (at the fixed oracle's price) pays both, this one included.
    const usd = pub.quotes[0].usd_price;
    expect(pub.pay_to[0].amount).toBeDefined();
    const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: pub.pay_to[0].amount, currency_code: 'BTC', transaction_id: txHash() });
    expect(tx.status).toBe(201);
    const after = (await anon().get(`/v1/public/invoices/${secret}`)).body;
    expect({ usd, status: after.status, remaining: after.amount_remaining, state: after.payment_status.state }).toEqual({ usd, status: 'paid', remaining: '0.00', state: 'paid' });
    expect((await a.api.get(`/v1/invoices/${older.id}`)).body.status).toBe('paid');
    expect(after.payments).toHaveLength(1);
  });

  it('a secret that opens nothing is 404 everywhere: unknown, malformed, or of a deleted invoice', async () => {
    const { a, invoice } = await setUp();
    for (const secret of ['x'.repeat(43), 'short', 'y'.repeat(200)]) {
      expect((await anon().get(`/invoice/${secret}`)).status).toBe(404);
      expect((await anon().get(`/invoice/${secret}/pdf`)).status).toBe(404);
      expect((await anon().get(`/invoice/${secret}/qr.svg?address=${BTC_BECH32}`)).status).toBe(404);
      const pub = await anon().get(`/v1/public/invoices/${secret}`);
      expect([pub.status, pub.body.error.code]).toEqual([404, 'resource_not_found']);
    }
    const page = await fetch(api.url + '/invoice/' + 'x'.repeat(43));
    expect(await page.text()).toContain('This invoice link does not exist');
    expect((await a.api.del(`/v1/invoices/${invoice.id}`)).status).toBe(204);
    expect((await anon().get(local(invoice.hosted_invoice_url))).status).toBe(404);
    expect((await anon().get(local(invoice.invoice_pdf))).status).toBe(404);
  });

  it('draws QR codes only of the invoice customer\'s own addresses and valid amounts', async () => {
    const { invoice } = await setUp();
    const base = local(invoice.hosted_invoice_url);
    const ok = await fetch(`${api.url}${base}/qr.svg?address=${BTC_BECH32}&amount=0.0001`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect((await anon().get(`${base}/qr.svg?address=bc1qnotours`)).status).toBe(404);
    expect((await anon().get(`${base}/qr.svg?address=${BTC_BECH32}&amount=0.123456789`)).status).toBe(422);
  });
});

describe('rotation and scoping', () => {
  it('a rotated link ends the old one (page, PDF, QR, endpoint) and the API shows the new one', async () => {
    const { a, invoice } = await setUp();
    const deps = testDependencies({ env: { PUBLIC_URL } });
    const old = local(invoice.hosted_invoice_url);
    expect((await anon().get(old)).status).toBe(200);
    const urls = await rotateInvoiceLinks(deps, { accountId: a.account_id, sandbox: null }, invoice.id);
    expect(urls.hosted_invoice_url).not.toBe(invoice.hosted_invoice_url);
    expect(urls.invoice_pdf).toBe(`${urls.hosted_invoice_url}/pdf`);
    for (const path of [old, `${old}/pdf`, `${old}/qr.svg?address=${BTC_BECH32}`, `/v1/public/invoices/${old.split('/')[2]}`]) {
      expect({ path, status: (await anon().get(path)).status }).toEqual({ path, status: 404 });
    }
    expect((await anon().get(local(urls.hosted_invoice_url))).status).toBe(200);
    expect((await getPdf(local(urls.invoice_pdf))).status).toBe(200);
    const got = (await a.api.get(`/v1/invoices/${invoice.id}`)).body;
    expect([got.hosted_invoice_url, got.invoice_pdf]).toEqual([urls.hosted_invoice_url, urls.invoice_pdf]);
    // The link is at its next generation; a second rotation ends the first's secret too.
    expect(await InvoiceLink.findById(invoice.id).lean()).toMatchObject({ generation: 1, secret: null });
    const again = await rotateInvoiceLinks(deps, { accountId: a.account_id, sandbox: null }, invoice.id);
    expect((await anon().get(local(urls.hosted_invoice_url))).status).toBe(404);
    expect((await anon().get(local(again.hosted_invoice_url))).status).toBe(200);
  });

  it("another account's invoice is never reachable: not rotated from another scope, not listed on another's page", async () => {
    const mine = await setUp();
    const theirs = await setUp();
    const deps = testDependencies({ env: { PUBLIC_URL } });
    await expect(rotateInvoiceLinks(deps, { accountId: mine.a.account_id, sandbox: null }, theirs.invoice.id)).rejects.toMatchObject({ status: 404 });
    await expect(rotateInvoiceLinks(deps, { accountId: theirs.a.account_id, sandbox: 'default' }, theirs.invoice.id)).rejects.toMatchObject({ status: 404 });
    // Their link still works, and my page shows none of theirs.
    expect((await anon().get(local(theirs.invoice.hosted_invoice_url))).status).toBe(200);
    const page = await (await fetch(api.url + local(mine.invoice.hosted_invoice_url))).text();
    expect(page).toContain(mine.invoice.id);
    expect(page).not.toContain(theirs.invoice.id);
    // A sandbox invoice's page is its own scope's too.
    const sandboxCustomer = (await mine.a.sandbox.post('/v1/customers', { email: 'sandboxed@x.io' })).body;
    const sandboxInvoice = await invoiceOf(mine.a.sandbox, sandboxCustomer.id, '5.00', '2031-01-01');
    const pub = (await anon().get(`/v1/public/invoices/${local(sandboxInvoice.hosted_invoice_url).split('/')[2]}`)).body;
    expect(pub.invoices.map((i: { id: string }) => i.id)).toEqual([sandboxInvoice.id]);
  });

  it('the pages share the public pages\' per-client window, and the endpoint the public endpoints\'', async () => {
    const limited = await startTestApi({}, { PUBLIC_URL, PUBLIC_RATE_LIMIT_PER_MINUTE: '4' });
    try {
      const c = client(limited.url);
      const s = 'z'.repeat(43);
      const pages = [await c.get(`/invoice/${s}`), await c.get(`/invoice/${s}/pdf`), await c.get(`/invoice/${s}/qr.svg`), await c.get(`/pay/${s}`), await c.get(`/invoice/${s}`)];
      expect(pages.map((r) => r.status)).toEqual([404, 404, 404, 404, 429]);
      expect(pages[4].body.error.code).toBe('rate_limit_error');
      const endpoint = [];
      for (let i = 0; i < 5; i++) endpoint.push((await c.get(`/v1/public/invoices/${s}`)).status);
      expect(endpoint).toEqual([404, 404, 404, 404, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('the PDF', () => {
  it('carries the invoice id, the parties, the lines, totals and amount due, names as written', async () => {
    const { invoice } = await setUp({ name: 'Åcme <script>alert(1)</script> Studio', first: 'Иван', last: 'Петров', email: 'ivan@x.io', productName: 'Zoë Ångström "onload=x' });
    const res = await getPdf(local(invoice.invoice_pdf));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="${invoice.id}.pdf"`);
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(res.bytes);
    expect(text).toMatch(new RegExp(`Invoice number\\s+${invoice.id}`));
    expect(text).toContain('Åcme <script>alert(1)</script> Studio');
    expect(text).toContain('Иван Петров');
    expect(text).toContain('ivan@x.io');
    expect(text).toContain('Zoë Ångström "onload=x');
    expect(text).toMatch(/Total\s+120\.50 USD/);
    expect(text).toMatch(/Paid\s+0\.00 USD/);
    expect(text).toMatch(/Amount due\s+120\.50 USD/);
    expect(text).toMatch(/Due date\s+2031-03-01/);
    expect(text).toMatch(/Status\s+Open/);
    expect(text.trimStart().split('\n')[0]).toBe('INVOICE');
    expect(text).not.toContain('VOID');
  });

  it('shows the payments received and what remains due', async () => {
    const { a, btc, invoice } = await setUp();
    // 0.001 BTC at the fixed oracle's price: part of the 120.50.
    const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash() });
    expect(tx.status).toBe(201);
    const paid = (await a.api.get(`/v1/invoices/${invoice.id}`)).body.amount_paid;
    expect(Number(paid)).toBeGreaterThan(0);
    const due = (120.5 - Number(paid)).toFixed(2);
    const text = pdfText((await getPdf(local(invoice.invoice_pdf))).bytes);
    expect(text).toContain('Payments received');
    expect(text).toContain('0.001 BTC');
    expect(text).toContain(tx.body.transaction_id);
    expect(text).toMatch(new RegExp(`Paid\\s+${paid.replace('.', '\\.')} USD`));
    expect(text).toMatch(new RegExp(`Amount due\\s+${due.replace('.', '\\.')} USD`));
  });

  it("a voided invoice's PDF says VOID and that nothing is due", async () => {
    const { a, invoice } = await setUp();
    expect((await a.api.patch(`/v1/invoices/${invoice.id}`, { status: 'canceled' })).status).toBe(200);
    const text = pdfText((await getPdf(local(invoice.invoice_pdf))).bytes);
    // Across the top, where an open invoice says INVOICE alone.
    expect(text.trimStart().split('\n')[0]).toMatch(/^INVOICE\s+VOID$/);
    expect(text).toContain('This invoice is VOID');
    expect(text).toMatch(/Status\s+Void/);
    expect(text).toMatch(/Amount due\s+0\.00 USD/);
    // The hosted page says so too, and offers nothing to pay.
    const html = await (await fetch(api.url + local(invoice.hosted_invoice_url))).text();
    expect(html).toContain('This invoice is void');
    expect(html).not.toContain('How to pay');
    expect(html).not.toContain('<script');
  });

  it('is served from the cache until the invoice changes, then made again; its ETag answers 304', async () => {
    const { a, invoice } = await setUp();
    const first = await getPdf(local(invoice.invoice_pdf));
    const cached = await InvoicePdf.findById(invoice.id).lean<{ key: string }>();
    expect(cached?.key).toBeDefined();
    expect(first.headers.get('etag')).toBe(`"${cached!.key}"`);
    // Mark the stored PDF: what is served next comes from the cache, not from a new rendering.
    const marker = Buffer.from('%PDF-1.3\n% served from the cache\n');
    await InvoicePdf.updateOne({ _id: invoice.id }, { $set: { pdf: marker } });
    const second = await getPdf(local(invoice.invoice_pdf));
    expect(second.bytes.equals(marker)).toBe(true);
    const notModified = await getPdf(local(invoice.invoice_pdf), { 'If-None-Match': first.headers.get('etag')! });
    expect([notModified.status, notModified.bytes.length]).toEqual([304, 0]);

    // A change of the invoice: a new PDF, with the change in it, stored under a new key.
    await new Promise((r) => setTimeout(r, 5));
    expect((await a.api.patch(`/v1/invoices/${invoice.id}`, { due_date: '2031-04-15' })).status).toBe(200);
    const third = await getPdf(local(invoice.invoice_pdf));
    expect(third.bytes.equals(marker)).toBe(false);
    expect(pdfText(third.bytes)).toMatch(/Due date\s+2031-04-15/);
    const recached = await InvoicePdf.findById(invoice.id).lean<{ key: string }>();
    expect(recached!.key).not.toBe(cached!.key);
    expect(third.headers.get('etag')).toBe(`"${recached!.key}"`);
    expect((await getPdf(local(invoice.invoice_pdf), { 'If-None-Match': first.headers.get('etag')! })).status).toBe(200);
    // The customer's rename shows too (it is on the PDF).
    await a.api.patch(`/v1/customers/${invoice.customer_id}`, { first_name: 'Renamed' });
    expect(pdfText((await getPdf(local(invoice.invoice_pdf))).bytes)).toContain('Renamed');
  });

  it('any write of the invoice makes a new PDF, whichever path wrote it', async () => {
    const { invoice } = await setUp();
    expect(pdfText((await getPdf(local(invoice.invoice_pdf))).bytes)).toMatch(/Total\s+120\.50 USD/);
    await Invoice.updateOne({ _id: invoice.id }, { $set: { total_amount: '999.99' } });
    expect(pdfText((await getPdf(local(invoice.invoice_pdf))).bytes)).toMatch(/Total\s+999\.99 USD/);
  });
});
