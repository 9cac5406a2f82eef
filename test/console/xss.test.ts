/**
 * Merchant- and customer-controlled strings through every server-rendered page (console, pay page,
 * docs): they come out as text. Checked in the HTML (no injected element or attribute) and in
 * Chromium, which loads each page without its CSP (so only the markup keeps a script from
 * running): no dialog opens, no element carries an event handler attribute, and no script but the
 * page's own exists, while the strings show as text. Then end to end: strings stored through the
 * API shown by the console under its real CSP.
 */
import type { Page } from 'playwright-core';
import { useApiAndBrowser } from '../support/browser';
import { useTestDatabase } from '../support/db';
import { newAccount } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { claimsPage, collectionsPage, errorPage, lifecyclePage, overviewPage, receivablesPage, signInPage, subscriptionsPage } from '../../src/api/console/views';
import { renderPayPage, scriptIntegrity } from '../../src/presenters/payPage';
import type { OpenPublicLink } from '../../src/presenters/payPage';
import { renderErrors, renderReference } from '../../src/api/docs/render';
import type { ConsoleSessionView } from '../../src/services/console/consoleSessions';
import { customerPage, customersPage, invoiceActionPage, invoicePage, invoicesPage, paymentPage, paymentsPage } from '../../src/api/console/dailyViews';

const PAYLOADS = ['<script>alert(1)</script>', '"onload="alert(2)', "'><img src=x onerror=alert(3)>", '</script><script>alert(4)</script>'];
/** Every payload in one string: what each merchant-controlled field holds below. */
const X = PAYLOADS.join(' ');

/** No element or attribute injected: the markup holds the payloads only escaped. */
function expectInert(html: string) {
  expect(html).not.toContain('<script>alert');
  expect(html).not.toContain('<img src=x');
  expect(html).not.toContain('"onload="');
  // An event-handler attribute inside any tag (after a quote, a space or a slash).
  expect(html).not.toMatch(/<[a-z][^<>]*["'\s/]on[a-z]+\s*=/i);
}

const session: ConsoleSessionView = {
  id: 'cs_1', userId: 1, email: X, twoFactor: false, accountId: 'acct_1', accountName: X, sandbox: X, sandboxes: [X, 'other'], csrfToken: X, expiresAt: new Date(),
};
const T = '2026-10-01T00:00:00.000Z';

/** Each page rendered with X in every string field a merchant or customer controls. */
function pages(): Record<string, string> {
  const overview = {
    month: '2026-11', mrr: '1.00', arr: '12.00', active_subscriptions: 1, churned_this_month: 0,
    open_total: { count: 1, amount: '1.00' }, overdue_total: { count: 0, amount: '0.00' }, collected_this_month: '0.00',
    amount_mismatches: [{ crypto_transaction_id: X, transaction_id: X, recorded_amount: '1', chain_amount: '2', currency: X, detected_at: T }],
    charts: { mrr: { labels: [X] }, aging: { labels: [X] }, collections: { labels: [X], currencies: [{ currency: X, usd: [1] }] } },
  };
  const table = { rows: [{ id: X, customer_email: X, customer_id: X, status: X, mrr: X, next_billing_date: X, start_date: X }], count: 1, page: 1, pages: 1 };
  const lifecycle = {
    id: X, customer_id: X, status: X, next_billing_date: T, canceled_at: null,
    phases: [{ start_date: T, end_date: null, items: [{ product_name: X, quantity: 1, price: X, interval: X, interval_count: 1 }] }],
    invoices: [{ id: X, status: X, period_start: T, period_end: T, due_date: '2026-10-01', total_amount: X, amount_paid: X }],
    payments: [{ at: T, invoice_id: X, amount_applied: X, amount: X, currency: X, source: X }],
    credits: [{ at: T, invoice_id: X, amount: X, description: X }],
    steps: [{ at: T, step: X, invoice_id: X, amount: X }],
  };
  const receivables = {
    as_of: X, total: { count: 1, amount: X }, overdue: { count: 1, amount: X },
    buckets: [{ bucket: X, label: X, count: 1, amount: X, invoices_truncated: false, invoices: [{ id: X, customer_id: X, status: X, due_date: X, days_past_due: 1, total_amount: X, balance: X }] }],
  };
  const collections = {
    from: X, to: X,
    rows: [{ month: X, currency: X, source: X, manual: true, payments: 1, amount: X, usd_value: X, allocated_usd: X, unallocated_usd: X }],
    months: [{ month: X, payments: 1, usd_value: X }],
    unallocated_credit: [{ customer_id: X, transactions: 1, amount: X }],
  };
  const link = {
    object: 'payment_claim_link', status: 'active', usable: true, expired: false, expires_at: T, max_uses: 1, use_count: 0,
    price: null, amount_due: X,
    invoices: [{ id: X, status: 'pending', due_date: X, total_amount: X, amount_due: X }],
    payment_status: { state: 'waiting', confirmations: null, confirmations_required: null },
    pay_to: [{ currency: X, address: X, explorer: { name: X, url: X }, amount: X, payment_uri: X, qr_code_url: X }],
    quotes: [{ currency: X, usd_price: X, amount: X }],
    verification_required: true, challenge: null,
  } as unknown as OpenPublicLink;
  const priced = { ...link, price: { id: X, amount: X, currency: X } } as unknown as OpenPublicLink;
  const doc = {
    info: { title: X, version: X, description: X },
    tags: [{ name: X, description: `${X} \`${X}\`` }],
    paths: {
      [`/${X}`]: {
        get: {
          tags: [X], operationId: X, summary: X, description: X,
          parameters: [{ name: X, in: X, description: X, schema: { type: 'string', pattern: X, enum: [X], default: X, format: X } }],
          responses: { [X]: { description: X, content: { 'application/json': { schema: { properties: { [X]: { $ref: `#/components/schemas/${X}` } } } } } } },
        },
      },
    },
    components: { securitySchemes: { [X]: { description: X } }, schemas: { [X]: { description: X, properties: { [X]: { description: X, const: X } }, required: [X] } } },
  };
  const script = { path: '/pay/assets/payPage.abc.js', integrity: scriptIntegrity('void 0;') };
  const claim = { _id: X, account_id: X, sandbox: X, status: 'pending', customer_id: X, payment_claim_link_id: X, currency: X, amount: X, transaction_id: X, to_address_id: X, to_address: X, created_at: new Date(T) };
  const evidence = {
    claim, canonicalHash: null,
    chainPayments: [{ _id: X, tx_hash: X, amount: X, status: X, block_height: 1, timestamp: new Date(T), sameHash: true }],
    transactions: [{ _id: X, transaction_id: X, transaction_source: X, amount: X, to_address: X, timestamp: new Date(T) }],
    otherClaims: [{ _id: X, status: X, amount: X, to_address: X, created_at: new Date(T) }],
  };
  const audit = { account_id: X, sandbox: X, user_id: 1, user_email: X, action: X, object_type: X, object_id: X, reason: X, outcome: 'refused', detail: X, client_address: X, at: new Date(T) };
  const label = { id: X, name: X, email: X };
  const labels = new Map([[X, label]]);
  const explorer = { name: X, url: X };
  const customer = {
    customer: { ...label, created_at: T },
    open_invoices: [{ id: X, status: X, due_date: X, total_amount: X, amount_paid: X, balance: X }],
    balance: X, credit: X,
    wallets: [{ id: X, addresses: [{ id: X, currency: X, address: X, explorer }] }],
    subscriptions: [{ id: X, status: X, next_billing_date: T, created_at: T }],
    payments: [{ id: X, currency: X, amount: X, usd_value: X, unallocated_amount: X, timestamp: T, source: X, invoices: [X] }],
  };
  const invoiceRow = { id: X, customer_id: X, customer: label, status: X, due_date: X, total_amount: X, amount_paid: X, balance: X, created_at: T };
  const invoice = {
    invoice: {
      id: X, customer_id: X, subscription_id: X, status: 'pending', due_date: X, total_amount: X, amount_paid: X, period_start: T, period_end: T,
      line_items: [{ id: X, price_id: X, product_id: X, product_name: X, quantity: 1, unit_amount: X, amount: X, description: X }],
      hosted_invoice_url: X, invoice_pdf: X, created_at: T, updated_at: T,
    },
    customer: label, amount_due: X, overpaid: X, hosted_invoice_url: X, invoice_pdf: X,
    allocations: [{ id: X, amount_applied: X, pays_in_full: true, created_at: T, transaction_id: X, payment: { id: X, currency: X, amount: X, hash: X, to_address: X, explorer, source: X, timestamp: T } }],
    events: [{ id: X, event: X, at: T, status: X }],
    audit: [audit],
  };
  const paymentRow = { id: X, customer_id: X, customer: label, currency: X, amount: X, usd_value: X, unallocated_amount: X, source: X, timestamp: T, invoices: 1 };
  const payment = {
    id: X, customer_id: X, customer: label, currency: X, amount: X, hash: X, from_address: X, to_address: X, to_address_id: X, explorer, timestamp: T,
    usd_value: X, usd_price: X, unallocated_amount: X, allocated_at: T, source: X, transaction_source: X,
    claim: { id: X, status: X, amount: X, approved_at: T },
    allocations: [{ id: X, invoice_id: X, invoice_status: X, invoice_total: X, amount_applied: X, released_amount: X, pays_in_full: true, created_at: T }],
  };
  const invoiceFilter = { status: X, customer: X, due_from: X, due_to: X, page: 2 };
  return {
    customers: customersPage(session, { rows: [{ id: X, name: X, email: X, created_at: T }], pagination: { page: 2, pages: 3, count: 60 }, query: X }, { error: X, notice: X }),
    customer: customerPage(session, customer as never),
    invoices: invoicesPage(session, invoiceFilter, { rows: [invoiceRow as never], page: 2, count: null, pages: null, more: true }, { error: X }),
    invoice: invoicePage(session, invoice as never, { error: X, notice: X }),
    invoiceMarkPaid: invoiceActionPage(session, invoice as never, 'mark_paid', { error: X }),
    invoiceVoid: invoiceActionPage({ ...session, twoFactor: true }, invoice as never, 'void'),
    payments: paymentsPage(session, { rows: [paymentRow as never], pagination: { page: 1, pages: 2, count: 30 } }),
    payment: paymentPage(session, payment as never),
    receivablesNamed: receivablesPage(session, receivables as never, labels),
    collectionsNamed: collectionsPage(session, collections as never, labels),
    lifecycleNamed: lifecyclePage(session, lifecycle as never, X, new Date(T), label),
    claimsNamed: claimsPage(session, [evidence as never], { recent: [audit as never], ofClaims: [audit as never] }, {}, labels),
    signIn: signInPage({ csrfToken: X, error: X, notice: X, email: X, otpRequired: true }),
    overview: overviewPage(session, overview as never),
    subscriptions: subscriptionsPage(session, { status: X, customer: X, next_from: X, next_to: X, page: 1 }, table as never),
    lifecycle: lifecyclePage(session, lifecycle as never, X, new Date(T)),
    receivables: receivablesPage(session, receivables as never),
    collections: collectionsPage(session, collections as never),
    claims: claimsPage(session, [evidence as never], { recent: [audit as never], ofClaims: [audit as never] }, { error: X, notice: X }),
    claimsTwoFactor: claimsPage({ ...session, twoFactor: true }, [evidence as never], { recent: [audit as never], ofClaims: [audit as never] }),
    error: errorPage(400, X, session),
    payPage: renderPayPage(link, script, X),
    payPagePrice: renderPayPage(priced, script, X),
    payPageClosed: renderPayPage({ object: 'payment_claim_link', status: X, usable: false, expired: false } as never, script, X),
    docs: renderReference(doc),
    docsErrors: renderErrors(),
  };
}

describe('every page renders merchant-controlled strings as text', () => {
  it.each(Object.entries(pages()))('%s: nothing injected in the HTML', (name, html) => {
    expectInert(html);
    if (name !== 'docsErrors') expect(html).toContain('&lt;script>alert(1)&lt;/script>');
  });

  it('the chart data block cannot be closed from inside', () => {
    const html = pages().overview;
    const block = /<script type="application\/json" id="chart-data">([^]*?)<\/script>/.exec(html)![1]!;
    expect(block).not.toContain('<');
    expect(JSON.parse(block).mrr.labels).toEqual([X]);
  });
});

useTestDatabase();
const env = useApiAndBrowser();

/** Loads the HTML (without its CSP) and answers what ran and what is there. */
async function inspect(page: Page, html: string) {
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.route('**/*', (route) => route.abort());
  await page.setContent(html, { waitUntil: 'load' });
  const found = await page.evaluate(() => ({
    handlers: Array.from(document.querySelectorAll('*')).flatMap((el) => el.getAttributeNames().filter((a) => a.startsWith('on')).map((a) => `${el.tagName}[${a}]`)),
    inlineScripts: Array.from(document.scripts).filter((s) => !s.src && s.type !== 'application/json').length,
    imgs: Array.from(document.images).map((i) => i.getAttribute('src')).filter((src) => src === 'x'),
    text: document.documentElement.textContent ?? '',
    title: document.title,
    attrs: Array.from(document.querySelectorAll('*')).map((el) => el.getAttributeNames().map((a) => el.getAttribute(a)).join(' ')).join(' '),
  }));
  return { dialogs, ...found };
}

describe('in Chromium', () => {
  it.each(Object.keys(pages()))('%s: no dialog, no handler, no injected script; the strings show as text', async (name) => {
    const context = await env.browser().newContext({ javaScriptEnabled: true });
    try {
      const page = await context.newPage();
      const r = await inspect(page, pages()[name]!);
      expect({ dialogs: r.dialogs, handlers: r.handlers, inlineScripts: r.inlineScripts, imgs: r.imgs }).toEqual({ dialogs: [], handlers: [], inlineScripts: 0, imgs: [] });
      if (name !== 'docsErrors') expect(`${r.text} ${r.title} ${r.attrs}`).toContain(PAYLOADS[0]);
    } finally {
      await context.close();
    }
  });

  it('strings stored through the API come out as text on the console under its CSP', async () => {
    const api = env.api();
    const a = await newAccount(api.url);
    const cust = (await a.api.post('/v1/customers', { email: 'xss@x.io', name: X, metadata: { note: X } })).body;
    const product = (await a.api.post('/v1/products', { name: X })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 900, recurring: { interval: 'month', interval_count: 1 } })).body;
    const sub = await a.api.post('/v1/subscriptions', { customer_id: cust.id, phases: [{ start_date: new Date().toISOString(), items: [{ price_id: price.id }] }] });
    expect(sub.status).toBe(201);
    const b = consoleBrowser(api.url);
    await b.signIn(a.email, a.password);
    const html = (await b.go('GET', `/console/subscriptions/${sub.body.id}`)).text;
    expectInert(html);
    expect(html).toContain('&lt;script>alert(1)&lt;/script>');
    const list = await b.go('GET', `/console/subscriptions?customer=${encodeURIComponent(X)}`);
    expectInert(list.text);
    // The new pages (issue 26), with a customer named and an invoice line described by the payloads.
    const named = (await a.api.post('/v1/customers', { email: 'named@x.io', first_name: X, last_name: X })).body;
    const inv = (await a.api.post('/v1/invoices', { customer_id: named.id, due_date: '2027-01-01', line_items: [{ price_id: price.id }] })).body;
    for (const path of ['/console/customers', `/console/customers?q=${encodeURIComponent('script alert')}`, `/console/customers/${named.id}`, '/console/invoices', `/console/invoices?customer=${encodeURIComponent(X)}`, `/console/invoices/${inv.id}`, `/console/invoices/${inv.id}/mark-paid`, `/console/invoices/${inv.id}/void`, '/console/receivables']) {
      const page = await b.go('GET', path);
      expect([path, page.status]).toEqual([path, 200]);
      expectInert(page.text);
    }
    expect((await b.go('GET', `/console/customers/${named.id}`)).text).toContain('&lt;script>alert(1)&lt;/script>');

    const context = await env.browser().newContext();
    try {
      const [name, value] = [...b.jar].find(([k]) => k === 'console_session')!;
      await context.addCookies([{ name, value, url: `${api.url}/console` }]);
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await page.goto(`${api.url}/console/subscriptions/${sub.body.id}`);
      expect(await page.locator('#phases td').nth(3).textContent()).toContain(PAYLOADS[0]);
      expect(dialogs).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
