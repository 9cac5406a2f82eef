/**
 * An invoice's hosted page in a real browser: Debian's `chromium` (installed by `npm test`)
 * driven by playwright-core, at a phone and a desktop width. The QR code is decoded from a
 * screenshot with jsqr, accessibility is checked with axe-core in the page, merchant-controlled
 * strings must come out as text, and screenshots go to `test-artifacts/invoice-page/`
 * (`TEST_ARTIFACTS_DIR` moves it).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { useTestDatabase } from '../support/db';
import { useApiAndBrowser } from '../support/browser';
import { axeViolations, decodeQr as decodeQrOf } from '../support/paymentPageChecks';
import { client, newAccount } from '../support/api';
import { BTC_BECH32, ETH_EIP55, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { Dec } from '../../src/cryptocurrency/amounts';
import { paymentUri } from '../../src/cryptocurrency/paymentUri';

const ARTIFACTS = join(process.env.TEST_ARTIFACTS_DIR ?? join(__dirname, '..', '..', 'test-artifacts'), 'invoice-page');
const VIEWPORTS = [
  { name: 'phone', viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true },
  { name: 'desktop', viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
] as const;
/** Merchant-controlled strings that would run or break out of an attribute if not escaped. */
const HOSTILE = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2"> "onload=window.__xss=3 \'';

useTestDatabase();
// Every page polls the public endpoint: more requests than one IP may make in a minute by default.
const env = useApiAndBrowser({}, { PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' });
beforeAll(() => mkdirSync(ARTIFACTS, { recursive: true }));

/** An invoice of a hostile-named account, customer and product, partly paid; the customer pays to BTC and ETH addresses of its own. */
async function hostileInvoice() {
  const a = await newAccount(env.api().url);
  expect((await a.api.patch(`/v1/accounts/${a.account_id}`, { name: `Acme ${HOSTILE}` })).status).toBe(200);
  const { customer, wallet } = await customerWithWallet(a.api, 'hostile@x.io');
  await a.api.patch(`/v1/customers/${customer.id}`, { first_name: HOSTILE, last_name: 'Петров' });
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55 });
  const product = (await a.api.post('/v1/products', { name: `Zoë ${HOSTILE}` })).body;
  const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 10000 })).body;
  const invoice = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2031-05-01', line_items: [{ price_id: price.id, quantity: 2 }] })).body;
  // Part of it paid: the page asks for what is still due.
  expect((await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash() })).status).toBe(201);
  return { a, customer, invoice, path: invoice.hosted_invoice_url.replace(/^https?:\/\/[^/]+/, '') as string };
}

async function open(path: string, vp: (typeof VIEWPORTS)[number], run: (page: Page) => Promise<void>) {
  const { name: _name, ...device } = vp;
  const context = await env.browser().newContext(device);
  const page = await context.newPage();
  const errors: string[] = [];
  const dialogs: string[] = [];
  const failed: string[] = [];
  page.on('console', (m) => {
    // A failed load is checked by its URL below.
    if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) errors.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  try {
    await page.goto(env.api().url + path);
    // The script ran: it shows the copy buttons.
    await page.locator('button.copy').first().waitFor({ state: 'visible' });
    await run(page);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss ?? null)).toBeNull();
  } finally {
    await context.close();
  }
  // A CSP violation (an inline script, a blocked file) would show up here.
  expect(errors).toEqual([]);
  expect(dialogs).toEqual([]);
  // Nothing the page names is missing (the browser's own favicon request aside).
  expect(failed.filter((f) => f !== '404 /favicon.ico')).toEqual([]);
}

const decodeQr = (page: Page, selector: string) => decodeQrOf(page, selector, ARTIFACTS);

/** What the QR code must hold: the amount due in BTC at the page's quote, rounded up to the satoshi. */
function expectedUri(amountDueUsd: string, usdPrice: string): string {
  const btc = new Dec(amountDueUsd).div(usdPrice).toDecimalPlaces(8, Dec.ROUND_UP);
  return paymentUri('BTC', BTC_BECH32, btc.toFixed());
}

describe('hosted invoice page in a browser', () => {
  it.each(VIEWPORTS.map((vp) => [vp.name, vp] as const))('%s: hostile names come out as text, axe finds nothing serious, the QR code holds what is still due', async (_name, vp) => {
    const { a, invoice, path } = await hostileInvoice();
    const stored = (await a.api.get(`/v1/invoices/${invoice.id}`)).body;
    const due = new Dec('200.00').minus(stored.amount_paid).toFixed(2);
    const pub = (await client(env.api().url).get(`/v1/public/invoices/${path.split('/')[2]}`)).body;
    expect(pub.amount_due).toBe(due);
    await open(path, vp, async (page) => {
      await page.screenshot({ path: join(ARTIFACTS, `open-${vp.name}.png`), fullPage: true });
      // Escaped: the strings are text on the page, and no element they name exists.
      const text = await page.locator('main').innerText();
      expect(text).toContain(`Acme ${HOSTILE}`);
      expect(text).toContain(`${HOSTILE} Петров`);
      expect(text).toContain(`Zoë ${HOSTILE}`);
      expect(await page.locator('img[src="x"]').count()).toBe(0);
      expect(await page.locator('[onload], [onerror]').count()).toBe(0);
      expect(await page.locator('script').count()).toBe(1);
      expect(await page.locator('#amount-due').innerText()).toBe(due);

      expect(await decodeQr(page, '[data-currency="BTC"] img.qr')).toBe(expectedUri(due, pub.quotes.find((q: { currency: string }) => q.currency === 'BTC').usd_price));
      expect(await axeViolations(page)).toEqual([]);
      if (vp.name === 'phone') {
        // Nothing wider than the screen but the scrolling table boxes.
        expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(1);
      }
    });
  });

  it('with an older open invoice, the QR code holds both balances; live status turns to paid when the invoice is paid', async () => {
    const { a, customer, invoice, path } = await hostileInvoice();
    const older = await invoiceOf(a.api, customer.id, '40.00', '2031-01-01');
    const stored = (await a.api.get(`/v1/invoices/${invoice.id}`)).body;
    const both = new Dec('200.00').minus(stored.amount_paid).plus('40.00').toFixed(2);
    const pub = (await client(env.api().url).get(`/v1/public/invoices/${path.split('/')[2]}`)).body;
    expect(pub.amount_due).toBe(both);
    await open(path, VIEWPORTS[1], async (page) => {
      await page.screenshot({ path: join(ARTIFACTS, 'older-open-desktop.png'), fullPage: true });
      expect(await page.locator('#earlier').innerText()).toContain('An older invoice is still open');
      expect(await page.locator(`#invoices tr[data-invoice-id="${older.id}"]`).count()).toBe(1);
      expect(await page.locator('#amount-due').innerText()).toBe(both);
      expect(await decodeQr(page, '[data-currency="BTC"] img.qr')).toBe(expectedUri(both, pub.quotes.find((q: { currency: string }) => q.currency === 'BTC').usd_price));
      expect(await axeViolations(page)).toEqual([]);

      // Settled elsewhere (marked paid): the page's next poll says so and stops asking.
      expect((await a.api.patch(`/v1/invoices/${invoice.id}`, { status: 'paid' })).status).toBe(200);
      await page.locator('#status[data-state="paid"]').waitFor({ timeout: 15_000 });
      expect(await page.locator('#status-text').innerText()).toBe('Paid. Thank you: this payment is complete.');
      expect(await page.locator('#pay').isHidden()).toBe(true);
      expect(await page.locator('#earlier').isHidden()).toBe(true);
      writeFileSync(join(ARTIFACTS, 'paid-desktop.png'), await page.screenshot({ fullPage: true }));
    });
  });
});
