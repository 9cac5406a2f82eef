/**
 * The finance console in a real browser: Debian's `chromium` driven by playwright-core. Signs in
 * with TOTP (and a wrong code first), checks the overview's figures against the reports API,
 * opens a subscription's lifecycle, downloads and parses a CSV, and checks CSRF and session
 * expiry. Screenshots of every page at desktop and phone widths go to artifacts/console/
 * (CONSOLE_ARTIFACTS_DIR), and no page may log an error (a CSP violation is one).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { axeViolations } from '../support/paymentPageChecks';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { useApiAndBrowser } from '../support/browser';
import { useTestDatabase } from '../support/db';
import { Client, newAccount, startTestApi, TestApi } from '../support/api';
import { currentOtp } from '../../src/cryptography/totp';
import { BTC_BECH32, customerWithWallet, txHash } from '../crypto/helpers';

const ARTIFACTS = process.env.CONSOLE_ARTIFACTS_DIR ?? path.join(__dirname, '..', '..', 'artifacts', 'console');
mkdirSync(ARTIFACTS, { recursive: true });

const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;
const DAY = 86_400_000;
const ago = (n: number) => new Date(Date.now() - n * DAY);
const day = (d: Date) => d.toISOString().slice(0, 10);

useTestDatabase();
const env = useApiAndBrowser();
let api: TestApi;
let browser: Browser;
beforeAll(() => {
  api = env.api();
  browser = env.browser();
});

/** Subscriptions (one with its invoices and a crypto payment), open invoices of several ages, a transaction with credit. */
async function seed(c: Client) {
  const { customer, wallet } = await customerWithWallet(c, 'finance-browser@x.io');
  const btc = (await c.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const product = (await c.post('/v1/products', { name: 'Team plan' })).body;
  const monthly = (await c.post('/v1/prices', { product_id: product.id, amount: 4900, recurring: { interval: 'month', interval_count: 1 } })).body;
  const yearly = (await c.post('/v1/prices', { product_id: product.id, amount: 60000, recurring: { interval: 'year', interval_count: 1 } })).body;
  const change = ago(30).toISOString(); // one instant: the phases must meet exactly
  const created = await c.post('/v1/subscriptions', {
    customer_id: customer.id,
    proration_behavior: 'none',
    phases: [
      { start_date: ago(95).toISOString(), end_date: change, items: [{ price_id: monthly.id }] },
      { start_date: change, items: [{ price_id: monthly.id, quantity: 3 }] },
    ],
  });
  expect(created.status).toBe(201);
  const sub = created.body;
  expect((await c.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: ago(50).toISOString(), items: [{ price_id: yearly.id }] }] })).status).toBe(201);
  const invoice = (due: Date, amount: string, subscriptionId?: string) =>
    c.post('/v1/invoices', { customer_id: customer.id, due_date: day(due), ...(subscriptionId ? { subscription_id: subscriptionId } : {}), line_items: [{ price_id: monthly.id, amount }] });
  // The subscription's invoices: the oldest is paid by crypto below (oldest due date first).
  for (const n of [88, 58, 28]) expect((await invoice(ago(n), '49.00', sub.id)).status).toBe(201);
  await invoice(ago(70), '120.00');
  await invoice(ago(-10), '15.00');
  // 0.002 BTC = 100.00 USD: pays the 49.00 invoice due 88 days ago, and 51.00 of the standalone one due 70 days ago.
  await c.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() });
  return { sub };
}

async function shoot(context: BrowserContext, page: Page, name: string) {
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    if (name === 'overview') await page.waitForTimeout(300); // charts redraw on resize
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${label}.png`), fullPage: true });
    // Accessible at both widths: axe-core finds nothing serious or critical.
    expect([name, label, await axeViolations(page)]).toEqual([name, label, []]);
    if (label === 'phone') {
      // Usable on a phone: nothing wider than the screen but the scrolling table boxes.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect([name, overflow <= 1]).toEqual([name, true]);
    }
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}

describe('finance console in headless Chromium', () => {
  it('signs in with TOTP, shows the reports\' figures, opens a lifecycle, downloads a CSV, and refuses a forged form', async () => {
    const a = await newAccount(api.url, { totp: true });
    const { sub } = await seed(a.api);
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, acceptDownloads: true });
    const page = await context.newPage();
    const errors = watchErrors(page);
    try {
      await page.goto(`${api.url}/console`);
      expect(new URL(page.url()).pathname).toBe('/console/sign-in');
      await shoot(context, page, 'sign-in');
      const code = currentOtp(a.otp_secret!);
      await page.fill('#email', a.email);
      await page.fill('#password', a.password);
      await page.fill('#otp_attempt', code === '000000' ? '111111' : '000000');
      await page.click('#sign-in');
      await page.locator('#error').waitFor();
      expect(await page.locator('#error').textContent()).toBe('Invalid two-factor code');
      await page.fill('#password', a.password);
      await page.fill('#otp_attempt', code);
      await page.click('#sign-in');
      await page.waitForURL(`${api.url}/console`);
      const cookies = await context.cookies();
      expect(cookies.find((c) => c.name === 'console_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });

      // Overview: the same figures as the reports API.
      await page.waitForSelector('body[data-charts="drawn"]');
      const [mrr, rcv, col] = await Promise.all([a.api.get('/v1/reports/mrr'), a.api.get('/v1/reports/receivables'), a.api.get('/v1/reports/collections')]);
      const now = mrr.body.months[mrr.body.months.length - 1];
      const text = async (id: string) => (await page.locator(id).textContent())?.trim();
      expect(await text('#fig-mrr')).toBe(now.mrr);
      expect(now.mrr).toBe('197.00'); // 3 x 49.00 + 600.00 / 12
      expect(await text('#fig-arr')).toBe(now.arr);
      expect(await text('#fig-churned')).toBe(String(now.churned_subscriptions));
      expect(await text('#fig-active')).toBe('2');
      expect(await text('#fig-open')).toBe(rcv.body.total.amount);
      expect(await text('#fig-overdue')).toBe(rcv.body.overdue.amount);
      expect(await text('#fig-collected')).toBe(col.body.months[col.body.months.length - 1].usd_value);
      expect(await page.locator('canvas#chart-mrr').boundingBox()).not.toBeNull();
      await shoot(context, page, 'overview');

      // Subscriptions, then one lifecycle.
      await page.click('nav >> text=Subscriptions');
      await page.waitForSelector('#subscriptions');
      expect(await page.locator('#subscriptions tbody tr').count()).toBe(2);
      await page.selectOption('select[name=status]', 'canceled');
      await page.click('form.filters button');
      expect(await text('#sub-count')).toBe('0 subscriptions');
      await page.goto(`${api.url}/console/subscriptions?customer=finance-browser`);
      await shoot(context, page, 'subscriptions');
      await page.click(`a[href="/console/subscriptions/${sub.id}"]`);
      await page.waitForSelector('#lifecycle-axis');
      expect(await page.locator('#lifecycle-axis rect.phase').count()).toBe(2);
      expect(await page.locator('#lifecycle-axis circle.inv-paid').count()).toBe(1);
      expect(await page.locator('#lifecycle-axis rect.payment').count()).toBe(1); // the rest went to an older standalone invoice
      expect(await page.locator('#invoices tbody tr').count()).toBe(3);
      expect(await page.locator('#timeline tbody').textContent()).toContain('created');
      expect(await page.getAttribute('#temporal-link', 'href')).toBe(`http://localhost:8233/namespaces/default/workflows/subscription-${sub.id}`);
      await shoot(context, page, 'lifecycle');

      // Receivables: its CSV, downloaded and parsed, lists what the API lists.
      await page.click('nav >> text=Receivables');
      await page.waitForSelector('table.bucket');
      await shoot(context, page, 'receivables');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv-link')]);
      const csv = readFileSync((await download.path())!, 'utf8').trim().split('\r\n').map((l) => l.split(','));
      expect(csv[0].slice(0, 3)).toEqual(['as_of', 'bucket', 'invoice_id']);
      const listed = rcv.body.buckets.flatMap((b: any) => b.invoices.map((i: any) => i.id)).sort();
      expect(csv.slice(1).map((r) => r[2]).sort()).toEqual(listed);
      expect(csv.slice(1).reduce((s, r) => s + Math.round(Number(r[9]) * 100), 0)).toBe(Math.round(Number(rcv.body.total.amount) * 100));

      await page.click('nav >> text=Collections');
      await page.waitForSelector('#collections');
      expect(await page.locator('#collections tbody').textContent()).toContain('manual_entry');
      await shoot(context, page, 'collections');

      // A form whose CSRF token is not the session's changes nothing.
      await page.evaluate(() => {
        (document.querySelector('#scope-form input[name=csrf_token]') as HTMLInputElement).value = 'forged';
      });
      await page.selectOption('#scope', 'sandbox:default');
      await page.click('#scope-switch');
      await page.waitForSelector('#error');
      expect(await text('#error')).toMatch(/did not come from this console/);
      await page.goto(`${api.url}/console`);
      expect(await page.locator('#scope').inputValue()).toBe('production');
      // The real token switches to the sandbox, which has nothing.
      await page.selectOption('#scope', 'sandbox:default');
      await page.click('#scope-switch');
      await page.waitForURL(`${api.url}/console`);
      expect(await text('#fig-mrr')).toBe('0.00');
      await page.click('#sign-out');
      await page.waitForURL(/\/console\/sign-in\?signed_out=1$/);
      // The wrong TOTP code (401) and the forged form (403) were meant; nothing else may fail, and no CSP violation.
      expect(errors.filter((e) => !/status of 40[13] /.test(e))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('ends the session at its expiry and asks to sign in again', async () => {
    // The sessions' clock is the test's (it stands still until moved): no race with a slow sign-in.
    let now = Date.now();
    const short = await startTestApi({ consoleClock: () => new Date(now) }, { CONSOLE_SESSION_TTL_SECONDS: '4' });
    const context = await browser.newContext({ viewport: VIEWPORTS.phone });
    const page = await context.newPage();
    try {
      const a = await newAccount(short.url);
      await page.goto(`${short.url}/console/sign-in`);
      await page.fill('#email', a.email);
      await page.fill('#password', a.password);
      await page.click('#sign-in');
      await page.waitForURL(`${short.url}/console`);
      now += 4_000; // the configured lifetime
      await page.click('nav >> text=Receivables');
      await page.waitForURL(/\/console\/sign-in\?expired=1$/);
      expect(await page.locator('#notice').textContent()).toBe('Your session has ended. Please sign in again.');
      await page.screenshot({ path: path.join(ARTIFACTS, 'session-expired-phone.png'), fullPage: true });
    } finally {
      await context.close();
      await short.close();
    }
  });
});
