/**
 * The pay page in a real browser: Debian's `chromium` (installed by `npm test`) driven by
 * playwright-core, at a phone and a desktop width. QR codes are decoded from screenshots with
 * jsqr, accessibility is checked with axe-core in the page, and every state is kept as a
 * screenshot in `test-artifacts/pay-page/` (`TEST_ARTIFACTS_DIR` moves it).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, Browser, BrowserContext, Page } from 'playwright-core';
import { useTestDatabase } from '../support/db';
import { axeViolations, decodeQr as decodeQrOf } from '../support/paymentPageChecks';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { BTC_BECH32, ETH_EIP55, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { ChainCursor, ChainPaymentRecord } from '../../src/models/chainPayment';
import { CryptoAddress } from '../../src/models/cryptoAddress';
import { FixedRateOracle } from '../../src/services/crypto/priceOracle';
import { SpotPrices } from '../../src/services/crypto/spotPrices';
import { SPOT_REFRESH_MS } from '../../src/cryptocurrency/priceFreshness';
import { SwitchableOracle } from '../support/dependencies';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
if (!CHROMIUM) throw new Error('no chromium found: `npm test` installs Debian\'s chromium (apt-get install chromium)');
const ARTIFACTS = join(process.env.TEST_ARTIFACTS_DIR ?? join(__dirname, '..', '..', 'test-artifacts'), 'pay-page');

const VIEWPORTS = [
  { name: 'phone', viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true },
  { name: 'desktop', viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
] as const;

useTestDatabase();
let api: TestApi;
let browser: Browser;
/** What this file's API prices with; a test moves the price and back. */
const oracle = new SwitchableOracle();
/** The spot refresher's clock, ahead of the real one by what a test skipped. */
let skippedMs = 0;
/** Prices with `next` from the refresher's next refresh on. */
function movePrice(next: FixedRateOracle) {
  oracle.current = next;
  skippedMs += SPOT_REFRESH_MS;
}
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  // Every page polls the public endpoint; this file makes more requests than one IP may in a minute.
  api = await startTestApi({ priceOracle: oracle, spotPrices: new SpotPrices(oracle, { now: () => Date.now() + skippedMs }) }, { PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});
afterAll(async () => {
  await browser?.close();
  await api.close();
});
afterEach(async () => {
  await ChainPaymentRecord.deleteMany({});
  await ChainCursor.deleteMany({});
});

async function linkFor(opts: { maxUses?: number; expiresInMs?: number; eth?: boolean } = {}) {
  const a = await newAccount(api.url);
  const { customer, wallet } = await customerWithWallet(a.api);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  if (opts.eth) await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55 });
  const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
  // The expiry counts from here: setting up can take seconds on a loaded machine.
  const expiry = opts.expiresInMs ? { expires_at: new Date(Date.now() + opts.expiresInMs).toISOString() } : {};
  const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: opts.maxUses ?? 1, ...expiry })).body;
  return { a, link, btc, invoice, url: link.link.replace(/^https?:\/\/[^/]+/, api.url) };
}

async function withPage(vp: (typeof VIEWPORTS)[number], run: (page: Page, context: BrowserContext) => Promise<void>, opts: { javaScriptEnabled?: boolean } = {}) {
  const { name: _name, ...device } = vp;
  const context = await browser.newContext({ ...device, javaScriptEnabled: opts.javaScriptEnabled ?? true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  try {
    await run(page, context);
  } finally {
    await context.close();
  }
  // A CSP violation (an inline script, a blocked file) shows up here.
  expect(errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e))).toEqual([]);
}

async function shot(page: Page, vp: { name: string }, what: string) {
  writeFileSync(join(ARTIFACTS, `${what}-${vp.name}.png`), await page.screenshot({ fullPage: true }));
}

const decodeQr = (page: Page, selector: string) => decodeQrOf(page, selector, ARTIFACTS);

describe('pay page: served without inline script', () => {
  it('renders what to pay on the server, loads one script file by hash, and its CSP allows nothing else', async () => {
    const { url, invoice } = await linkFor({ eth: true });
    const res = await fetch(url);
    const html = await res.text();
    expect(res.status).toBe(200);
    // Useful before any script: the invoices, the total, the estimate, the address and its QR code.
    expect(html).toContain(invoice.id);
    expect(html).toContain('2027-01-01');
    expect(html).toMatch(/<span id="amount-due">100\.00<\/span> USD/);
    expect(html).toContain(BTC_BECH32);
    expect(html).toMatch(/<img class="qr" src="\/pay\/[^"]+\/qr\.svg\?address=/);
    expect(html).toContain('Waiting for your payment.');
    expect(html).not.toContain('Loading');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0][2]).toBe('');
    const [, src] = /src="([^"]+)"/.exec(scripts[0][1])!;
    const [, integrity] = /integrity="([^"]+)"/.exec(scripts[0][1])!;
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain(`script-src '${integrity}' ${api.url}${src}`);
    expect(csp).toContain("default-src 'none'");

    const js = await fetch(api.url + src);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    const body = Buffer.from(await js.arrayBuffer());
    expect(`sha256-${(await import('node:crypto')).createHash('sha256').update(body).digest('base64')}`).toBe(integrity);
    expect((await fetch(`${api.url}/pay/assets/other.js`)).status).toBe(404);

    // The QR code is ours, SVG, and only for the link's own addresses and valid amounts.
    const qr = html.match(/src="(\/pay\/[^"]+\/qr\.svg\?[^"]+)"/)![1].replace(/&amp;/g, '&');
    const svg = await fetch(api.url + qr);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await svg.text()).toMatch(/^<svg /);
    const path = new URL(url).pathname;
    expect((await fetch(`${api.url}${path}/qr.svg?address=${ETH_EIP55.slice(0, -1)}0`)).status).toBe(404);
    expect((await fetch(`${api.url}${path}/qr.svg?address=${BTC_BECH32}&amount=0.000000001`)).status).toBe(422);
  });
});

describe.each(VIEWPORTS)('pay page at $name width', (vp) => {
  it('is complete with scripts off: invoices, total, estimate and QR codes', async () => {
    const { url, invoice } = await linkFor({ eth: true });
    await withPage(
      vp,
      async (page) => {
        await page.goto(url);
        expect(await page.locator(`#invoices tr[data-invoice-id="${invoice.id}"]`).textContent()).toContain('100.00 USD');
        // Nothing wider than the screen (a phone would zoom the page out).
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(vp.viewport.width);
        expect(await decodeQr(page, '[data-option="0"] img.qr')).toBe(`bitcoin:${BTC_BECH32}?amount=0.002`);
        // Copy buttons need the script: hidden without it.
        expect(await page.locator('button.copy').first().isHidden()).toBe(true);
        await shot(page, vp, 'no-script');
      },
      { javaScriptEnabled: false },
    );
  });

  it('QR codes decode to the BIP 21 and EIP-681 URIs, copy works from the keyboard, and axe finds nothing serious', async () => {
    const { url } = await linkFor({ eth: true });
    await withPage(vp, async (page, context) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: api.url });
      await page.goto(url);
      await page.locator('button.copy').first().waitFor({ state: 'visible' });
      // The estimate is labelled as one: 100.00 USD at BTC 50,000 and ETH 3,000 (fixed oracle).
      expect(await page.locator('[data-option="0"]').textContent()).toMatch(/Amount\s*estimate\s*0\.002\s*BTC/);
      expect(await decodeQr(page, '[data-option="0"] img.qr')).toBe(`bitcoin:${BTC_BECH32}?amount=0.002`);
      expect(await page.locator('#amount-1').textContent()).toBe('0.033333333333333334');
      expect(await decodeQr(page, '[data-option="1"] img.qr')).toBe(`ethereum:${ETH_EIP55}?value=33333333333333334`);
      expect(await page.locator('[data-option="1"] a.wallet-link').getAttribute('href')).toBe(`ethereum:${ETH_EIP55}?value=33333333333333334`);

      // Keyboard only: Tab to the address's copy button, press Enter.
      let focused = '';
      for (let i = 0; i < 40 && focused !== 'address-0'; i++) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate(() => document.activeElement?.getAttribute('data-copy') ?? '');
      }
      expect(focused).toBe('address-0');
      await page.keyboard.press('Enter');
      // The copy is asynchronous (the clipboard's promise): wait for the button to say so.
      await page.waitForFunction(() => document.querySelector('button[data-copy="address-0"]')?.textContent === 'Copied');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(BTC_BECH32);
      await page.waitForFunction(() => document.querySelector('#copy-status')?.textContent === 'The address was copied.');
      await shot(page, vp, 'copied');
      await page.locator('button[data-copy="amount-0"]').click();
      await page.waitForFunction(() => document.querySelector('button[data-copy="amount-0"]')?.textContent === 'Copied');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('0.002');

      // The price moves (BTC 40,000): the polled estimate, its QR code and wallet link follow.
      movePrice(new FixedRateOracle({ BTC: '40000.00', ETH: '3000.00' }));
      try {
        await page.waitForFunction(() => document.getElementById('amount-0')?.textContent === '0.0025', undefined, { timeout: 20_000 });
        expect(await decodeQr(page, '[data-option="0"] img.qr')).toBe(`bitcoin:${BTC_BECH32}?amount=0.0025`);
        expect(await page.locator('[data-option="0"] a.wallet-link').getAttribute('href')).toBe(`bitcoin:${BTC_BECH32}?amount=0.0025`);
        expect(await page.locator('[data-option="0"] [data-field="rate"]').textContent()).toContain('1 BTC = 40000.00 USD');
      } finally {
        movePrice(new FixedRateOracle());
      }

      // The countdown runs.
      expect(await page.locator('#countdown').textContent()).toMatch(/\(in (\d+ d )?\d+ h \d\d min \d\d s\)/);
      expect(await axeViolations(page)).toEqual([]);
    });
  });

  it('moves from waiting to detected (n of N confirmations) to paid, and a paid link hides the form', async () => {
    const { a, url, btc, invoice } = await linkFor();
    await withPage(vp, async (page) => {
      await page.goto(url);
      expect(await page.locator('#status').getAttribute('data-state')).toBe('waiting');
      await shot(page, vp, 'waiting');

      // The watcher saw a payment to the customer's address in block 100 and scanned up to 100: 1 of 2.
      const key = (await CryptoAddress.findById(btc.id).lean<{ address_key: string }>())!.address_key;
      const hash = txHash();
      await ChainPaymentRecord.create({ _id: `BTC:${hash}:0`, currency: 'BTC', tx_hash: hash, output_index: 0, to_address: BTC_BECH32, address_key: key, amount: '0.002', block_height: 100, block_hash: 'b'.repeat(64), timestamp: new Date(), status: 'pending' });
      await ChainCursor.create({ _id: 'BTC', height: 100, hash: 'b'.repeat(64) });
      await page.locator('#status[data-state="detected"]').waitFor({ timeout: 20_000 });
      expect(await page.locator('#status').textContent()).toContain('Payment detected (1 of 2 confirmations)');
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, vp, 'detected');

      // Final: the payment is recorded and pays the invoice.
      const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: hash });
      expect(tx.status).toBe(201);
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
      await page.locator('#status[data-state="paid"]').waitFor({ timeout: 20_000 });
      expect(await page.locator('#status').textContent()).toContain('Paid');
      expect(await page.locator('#claim-form').isHidden()).toBe(true);
      expect(await page.locator('#pay').isHidden()).toBe(true);
      expect(await page.locator(`tr[data-invoice-id="${invoice.id}"]`).textContent()).toContain('100.00 USD, paid');
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, vp, 'paid');

      // Opened again, the paid link says so from the server.
      await page.goto(url);
      expect(await page.locator('#status').getAttribute('data-state')).toBe('paid');
      expect(await page.locator('#claim-form').isHidden()).toBe(true);
    });
  });

  it('submits a claim (proof of work in the browser); then the used link says so', async () => {
    const { a, url, link } = await linkFor();
    await withPage(vp, async (page) => {
      await page.goto(url);
      await page.locator('button.copy').first().waitFor({ state: 'visible' });
      await page.selectOption('#currency', 'BTC');
      await page.fill('#amount', '0.000000001');
      await page.fill('#transaction_id', txHash());
      await page.click('#submit');
      await page.locator('#form-error').waitFor({ state: 'visible', timeout: 60_000 });
      expect(await page.locator('#form-error').textContent()).toMatch(/at most 8 decimal places/);
      await shot(page, vp, 'form-error');

      await page.fill('#amount', '0.002');
      const hash = txHash();
      await page.fill('#transaction_id', hash);
      await page.click('#submit');
      await page.locator('#done').waitFor({ state: 'visible', timeout: 60_000 });
      expect(await page.locator('#done').textContent()).toMatch(/payment claim was received \(reference pymt_claim_/);
      const claims = (await a.api.get('/v1/crypto_payment_claims')).body.crypto_payment_claims;
      expect(claims).toHaveLength(1);
      expect(claims[0]).toMatchObject({ status: 'pending', transaction_id: hash, amount: '0.002', to_address: BTC_BECH32 });
      expect((await a.api.get(`/v1/payment_claim_links/${link.id}`)).body.status).toBe('used');
      // Polling stopped: the thank-you stays.
      await page.waitForTimeout(6000);
      expect(await page.locator('#done').isVisible()).toBe(true);

      await page.goto(url);
      expect(await page.locator('#unusable').textContent()).toMatch(/already been used/);
      expect(await page.locator('#claim-form').count()).toBe(0);
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, vp, 'used');
    });
  });

  it('an expired link says so, live when the countdown ends and from the server after; an unknown one does not exist', async () => {
    const soon = await linkFor({ expiresInMs: 8000 });
    await withPage(vp, async (page) => {
      await page.goto(soon.url);
      expect(await page.locator('#status').getAttribute('data-state')).toBe('waiting');
      await page.locator('#unusable').waitFor({ state: 'visible', timeout: 30_000 });
      expect(await page.locator('#unusable').textContent()).toMatch(/expired/);
      expect(await page.locator('#claim-form').isHidden()).toBe(true);
      expect(await page.locator('#pay').isHidden()).toBe(true);

      const res = await page.goto(soon.url);
      expect(res!.status()).toBe(200);
      expect(await page.locator('#unusable').textContent()).toMatch(/has expired/);
      expect(await axeViolations(page)).toEqual([]);
      await shot(page, vp, 'expired');

      const missing = await page.goto(`${api.url}/pay/${'n'.repeat(43)}`);
      expect(missing!.status()).toBe(404);
      expect(await page.locator('#unusable').textContent()).toMatch(/does not exist/);
    });
  });
});
