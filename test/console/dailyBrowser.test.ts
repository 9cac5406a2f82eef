/**
 * The console's customers, invoices and payments pages and the invoice actions' confirmations in
 * headless Chromium (Debian's, through playwright-core) at desktop and phone widths: axe-core finds
 * nothing serious or critical, nothing but the table boxes is wider than a phone, no page logs an
 * error (a CSP violation is one). Then a search, and marking an invoice paid through the form.
 * Screenshots go to artifacts/console/ (CONSOLE_ARTIFACTS_DIR).
 */
import { mkdirSync } from 'node:fs';
import { axeViolations } from '../support/paymentPageChecks';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { useApiAndBrowser } from '../support/browser';
import { useTestDatabase } from '../support/db';
import { newAccount } from '../support/api';
import { BTC_BECH32, invoiceOf, txHash } from '../crypto/helpers';

const ARTIFACTS = process.env.CONSOLE_ARTIFACTS_DIR ?? path.join(__dirname, '..', '..', 'artifacts', 'console');
mkdirSync(ARTIFACTS, { recursive: true });
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

useTestDatabase();
const env = useApiAndBrowser();

/** axe-core's serious and critical findings, and the page's overflow on a phone, at both widths. */
async function check(page: Page, name: string) {
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    const serious = await axeViolations(page);
    expect([name, label, serious]).toEqual([name, label, []]);
    if (label === 'phone') {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect([name, overflow <= 1]).toEqual([name, true]);
    }
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

describe('customers, invoices and payments in Chromium', () => {
  it('every new page and both confirmations read well at desktop and phone widths; search and mark paid work in the browser', async () => {
    const api = env.api();
    const a = await newAccount(api.url);
    const customer = (await a.api.post('/v1/customers', { email: 'maria.lopez-garcia.with.a.long.address@example-company.com', first_name: 'María', last_name: 'López García' })).body;
    const wallet = ((await a.api.get('/v1/wallets')).body.wallets as any[]).find((w) => w.owner_id === customer.id);
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    const paid = await invoiceOf(a.api, customer.id, '60.00', '2027-01-01');
    const open = await invoiceOf(a.api, customer.id, '200.00', '2027-02-01');
    const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() })).body;

    const context = await env.browser().newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    try {
      await page.goto(`${api.url}/console/sign-in`);
      await page.fill('#email', a.email);
      await page.fill('#password', a.password);
      await page.click('#sign-in');
      await page.waitForURL(`${api.url}/console`);

      await page.click('nav >> text=Customers');
      await page.waitForSelector('#customers');
      await page.fill('input[name=q]', 'lópez');
      await page.click('#customer-search');
      await page.waitForURL(/q=l%C3%B3pez/);
      expect(await page.locator('#customers tbody tr').count()).toBe(1);
      await check(page, 'customers');
      await page.click(`#customers a[href="/console/customers/${customer.id}"]`);
      await page.waitForSelector('#customer-name');
      expect(await page.textContent('#customer-name')).toBe('María López García');
      await check(page, 'customer');

      await page.click('nav >> text=Invoices');
      await page.waitForSelector('#invoices');
      expect(await page.locator('#invoices tbody tr').count()).toBe(2);
      await check(page, 'invoices');
      await page.goto(`${api.url}/console/invoices/${paid.id}`);
      expect(await page.textContent('#invoice-status')).toBe('paid');
      await check(page, 'invoice-paid');

      await page.click('nav >> text=Payments');
      await page.waitForSelector('#payments');
      await check(page, 'payments');
      await page.click(`#payments a[href="/console/payments/${tx.id}"]`);
      await page.waitForSelector('#payment-allocations');
      expect(await page.locator('#payment-allocations tbody tr').count()).toBe(2);
      await check(page, 'payment');

      // The void confirmation, then mark paid: the box unticked is stopped by the browser, ticked it goes.
      await page.goto(`${api.url}/console/invoices/${open.id}/void`);
      await check(page, 'invoice-void-confirm');
      await page.goto(`${api.url}/console/invoices/${open.id}`);
      await page.click('#mark-paid-link');
      await page.waitForSelector('#mark-paid-form');
      await check(page, 'invoice-mark-paid-confirm');
      await page.fill('#mark-paid-step-up', a.password);
      await page.click('#mark-paid-submit');
      expect(page.url()).toBe(`${api.url}/console/invoices/${open.id}/mark-paid`);
      await page.check('#mark-paid-form input[name=confirm]');
      await page.click('#mark-paid-submit');
      await page.waitForURL(`${api.url}/console/invoices/${open.id}?done=paid`);
      expect(await page.textContent('#notice')).toBe('The invoice was marked paid.');
      expect(await page.textContent('#invoice-status')).toBe('paid');
      expect(await page.textContent('#invoice-audit')).toContain(`${a.email} - mark paid - paid`);
      await check(page, 'invoice-after-action');
      expect((await a.api.get(`/v1/invoices/${open.id}`)).body.status).toBe('paid');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
