/**
 * The console's payment claims queue (issue 26, first slice: the queue, read only): the scope's
 * pending claims with what the service stored about each payment (chain payments to the
 * address, transactions and other claims with the hash), another account's claims never shown,
 * and the page in Chromium at desktop and phone widths with axe-core finding nothing serious.
 */
import { axeViolations } from '../support/paymentPageChecks';
import { useApiAndBrowser } from '../support/browser';
import { useTestDatabase } from '../support/db';
import { newAccount } from '../support/api';
import { consoleBrowser } from '../support/consoleBrowser';
import { BTC_BECH32, customerWithWallet, txHash } from '../crypto/helpers';
import { PaymentClaim } from '../../src/models/paymentClaim';
import { ChainPaymentRecord } from '../../src/models/chainPayment';
import { CryptoAddress } from '../../src/models/cryptoAddress';
import { newId, ID_PREFIX } from '../../src/lib/ids';

const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

useTestDatabase();
const env = useApiAndBrowser();

/** An account with a BTC address and a pending claim to it (stored as a submission through a link stores it). */
async function accountWithClaim(hash = txHash()) {
  const a = await newAccount(env.api().url);
  const { customer, wallet } = await customerWithWallet(a.api);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const account_id = a.account_id;
  const claim = async (status: 'pending' | 'rejected' = 'pending', amount = '0.002') =>
    (
      await PaymentClaim.create({
        _id: newId(ID_PREFIX.paymentClaim), account_id, sandbox: null, status, customer_id: customer.id, payment_claim_link_id: 'pcl_test',
        currency: 'BTC', amount, transaction_id: hash, to_address_id: btc.id, to_address: btc.address,
      })
    ).toObject();
  return { a, customer, btc, hash, claim, first: await claim() };
}

describe('payment claims queue', () => {
  it('lists the scope\'s pending claims with the stored evidence, and never another account\'s', async () => {
    const { a, btc, hash, claim, first } = await accountWithClaim();
    const other = await claim('rejected', '0.001');
    // The same payment already recorded by hand, and seen by the watcher.
    expect((await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: hash })).status).toBe(201);
    await ChainPaymentRecord.create({
      _id: `BTC:${hash}:0`, currency: 'BTC', tx_hash: hash, output_index: 0, to_address: btc.address, address_key: (await CryptoAddress.findById(btc.id).lean<{ address_key: string }>())!.address_key,
      amount: '0.002', block_height: 800000, block_hash: 'b'.repeat(64), timestamp: new Date(), status: 'recorded',
    });
    const b = consoleBrowser(env.api().url);
    await b.signIn(a.email, a.password);
    const page = await b.go('GET', '/console/claims');
    expect(page.status).toBe(200);
    const section = page.text.slice(page.text.indexOf(`id="claim-${first._id}"`));
    expect(section).toContain(hash);
    expect(section).toMatch(/class="evidence chain-payments"><li class="match">0\.002 BTC, recorded, block 800000/);
    expect(section).toMatch(/class="evidence transactions"><li>trxn_[^:]+: 0\.002 BTC to /);
    expect(section).toContain(`${other._id}: 0.001 BTC to ${btc.address}, rejected`);
    expect(page.text).not.toContain(`id="claim-${other._id}"`); // rejected: not in the queue
    expect(page.text).toContain('1 pending claim,');

    const stranger = await newAccount(env.api().url);
    const s = consoleBrowser(env.api().url);
    await s.signIn(stranger.email, stranger.password);
    const theirs = await s.go('GET', '/console/claims');
    expect(theirs.text).not.toContain(first._id);
    expect(theirs.text).toContain('0 pending claims,');
  });

  it('reads well at desktop and phone widths: axe-core finds nothing serious, nothing wider than the screen', async () => {
    const { a, claim } = await accountWithClaim();
    await claim();
    const context = await env.browser().newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      await page.goto(`${env.api().url}/console/sign-in`);
      await page.fill('#email', a.email);
      await page.fill('#password', a.password);
      await page.click('#sign-in');
      await page.waitForURL(`${env.api().url}/console`);
      await page.goto(`${env.api().url}/console/claims`);
      expect(await page.locator('section.claim').count()).toBe(2);
      for (const [name, size] of Object.entries(VIEWPORTS)) {
        await page.setViewportSize(size);
        const serious = await axeViolations(page);
        expect([name, serious]).toEqual([name, []]);
        // Nothing wider than the screen (naming what sticks out, if anything).
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
