/**
 * The pay page in a real browser: Debian's `chromium` (installed by `npm test`) driven by
 * playwright-core.
 */
import type { Browser } from 'playwright-core';
import { useApiAndBrowser } from '../support/browser';
import { useTestDatabase } from '../support/db';
import { newAccount, TestApi } from '../support/api';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';


useTestDatabase();
const env = useApiAndBrowser();
let api: TestApi;
let browser: Browser;
beforeAll(() => {
  api = env.api();
  browser = env.browser();
});

async function linkFor(opts: { maxUses?: number; expiresAt?: string } = {}) {
  const a = await newAccount(api.url);
  const { customer, wallet } = await customerWithWallet(a.api);
  await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
  await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
  const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: opts.maxUses ?? 1, ...(opts.expiresAt ? { expires_at: opts.expiresAt } : {}) })).body;
  return { a, link, url: link.link.replace(/^https?:\/\/[^/]+/, api.url) };
}

describe('pay page in headless Chromium', () => {
  it('shows what to pay and where, solves the challenge, submits the claim and confirms it', async () => {
    const { a, url, link } = await linkFor();
    const page = await browser.newPage();
    try {
      await page.goto(url);
      await page.locator('#details').waitFor({ state: 'visible' });
      expect(await page.locator('#amount-due').textContent()).toBe('100.00');
      expect(await page.locator('#addresses').textContent()).toContain(BTC_BECH32);
      expect(await page.locator('#quotes').textContent()).toContain('0.002 BTC');
      await page.selectOption('#currency', 'BTC');
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

      // Opened again: the link is used up, and the page says so.
      await page.goto(url);
      await page.locator('#unusable').waitFor({ state: 'visible' });
      expect(await page.locator('#unusable').textContent()).toMatch(/already been used/);
    } finally {
      await page.close();
    }
  });

  it('shows a form error from the API and a clear message for an expired or unknown link', async () => {
    const { url } = await linkFor();
    const page = await browser.newPage();
    try {
      await page.goto(url);
      await page.locator('#details').waitFor({ state: 'visible' });
      await page.fill('#amount', '0.000000001');
      await page.fill('#transaction_id', txHash());
      await page.click('#submit');
      await page.locator('#form-error').waitFor({ state: 'visible', timeout: 60_000 });
      expect(await page.locator('#form-error').textContent()).toMatch(/at most 8 decimal places/);

      const soon = await linkFor({ expiresAt: new Date(Date.now() + 1500).toISOString() });
      await new Promise((r) => setTimeout(r, 2000));
      await page.goto(soon.url);
      await page.locator('#unusable').waitFor({ state: 'visible' });
      expect(await page.locator('#unusable').textContent()).toMatch(/expired/);

      await page.goto(`${api.url}/pay/${'n'.repeat(43)}`);
      await page.locator('#unusable').waitFor({ state: 'visible' });
      expect(await page.locator('#unusable').textContent()).toMatch(/does not exist/);
    } finally {
      await page.close();
    }
  });
});
