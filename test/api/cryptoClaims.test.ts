import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi, client } from '../support/api';
import { createHmac } from 'node:crypto';
import { Event } from '../../src/models/event';
import { SpentClaimSolution } from '../../src/models/claimChallenge';
import { PaymentClaimLink } from '../../src/models/paymentClaimLink';
import { Invoice, paidMarks } from '../../src/models/invoice';
import { PaymentClaim, PaymentClaimDecision } from '../../src/models/paymentClaim';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';
import { CryptoAddress } from '../../src/models/cryptoAddress';
import { ChainCursor, ChainPaymentRecord } from '../../src/models/chainPayment';
import { claimTransactionId } from '../../src/services/crypto/paymentClaims';
import { submitPaymentClaim } from '../../src/services/crypto/paymentClaimSubmission';
import { testDependencies } from '../support/dependencies';
import { claimChallengeHmacKey, createClaimChallenge, verifyClaimSolution } from '../../src/services/crypto/claimChallenges';
import { ConfigError, loadConfig } from '../../src/config';
import type { TemporalContext } from '../../src/temporal/context';
import { claimLinkWorkflows } from '../../src/temporal/clients/claimLink';
import { createWorkflowStarts } from '../../src/services/writes/workflowStarts';
import pino from 'pino';
import { BTC_BECH32, ETH_EIP55, ETH_EIP55_2, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const altcha = require('altcha-lib/v1') as { solveChallenge(challenge: string, salt: string, algorithm?: string, max?: number): { promise: Promise<{ number: number } | null> } };

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  // This file makes more public requests than one client may in a minute; the limit has its own test.
  api = await startTestApi({}, { PUBLIC_URL: 'https://pay.example.com', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(() => api.close());

const anon = () => client(api.url);

/** Solves the link's challenge like the pay page does. */
async function solve(challenge: any): Promise<string> {
  const solution = await altcha.solveChallenge(challenge.challenge, challenge.salt, challenge.algorithm, challenge.maxnumber).promise;
  if (!solution) throw new Error('unsolved');
  return Buffer.from(JSON.stringify({ algorithm: challenge.algorithm, challenge: challenge.challenge, number: solution.number, salt: challenge.salt, signature: challenge.signature })).toString('base64');
}

async function setup() {
  const a = await newAccount(api.url);
  const { customer, wallet } = await customerWithWallet(a.api);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const eth = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55 })).body;
  return { a, customer, btc, eth };
}

const secretOf = (link: any) => link.link.split('/pay/')[1];

describe('payment claim links', () => {
  it('creates links with the defaults, a secret URL, price_id, and the spec errors', async () => {
    const { a, customer } = await setup();
    const before = Date.now();
    const res = await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, metadata: 'order 42' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'payment_claim_link',
      status: 'active',
      max_uses: 1,
      use_count: 0,
      used_at: null,
      metadata: 'order 42',
      customer_id: customer.id,
      crypto_payment_claim_id: null,
      usable: true,
      expired: false,
    });
    expect(res.body.id).toMatch(/^pcl_/);
    const expires = Date.parse(res.body.expires_at);
    expect(expires - before).toBeGreaterThanOrEqual(24 * 3600_000 - 1000);
    expect(expires - before).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
    expect(res.body.link).toMatch(/^https:\/\/pay\.example\.com\/pay\/[A-Za-z0-9_-]{32,}$/);
    expect(res.body.link).not.toContain(res.body.id);
    expect((await a.api.get(`/v1/payment_claim_links/${res.body.id}`)).body).toEqual(res.body);
    expect((await a.api.get('/v1/payment_claim_links')).body).toMatchObject({ payment_claim_links: [res.body], pagination: { count: 1 } });

    const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 2500 })).body;
    const withPrice = await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, price_id: price.id, max_uses: 3, expires_at: '2099-01-01T00:00:00.000Z' });
    expect(withPrice.body).toMatchObject({ price_id: price.id, max_uses: 3, expires_at: '2099-01-01T00:00:00.000Z' });
    const publicView = (await anon().get(`/v1/public/payment_claim_links/${secretOf(withPrice.body)}`)).body;
    expect(publicView).toMatchObject({ price: { id: price.id, amount: '25.00' }, amount_due: '25.00' });
    // The merchant's notes stay the merchant's: neither the public view nor the pay page shows them.
    expect(publicView).not.toHaveProperty('metadata');

    // The contract types `metadata` as a string (not "string or null"): none given reads "".
    expect(withPrice.body.metadata).toBe('');
    expect((await a.api.get(`/v1/payment_claim_links/${withPrice.body.id}`)).body.metadata).toBe('');
    const nullMetadata = await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, metadata: null });
    expect(nullMetadata.body.metadata).toBe('');
    expect((await a.api.get('/v1/payment_claim_links')).body.payment_claim_links.map((l: any) => l.metadata)).toEqual(['', '', 'order 42']);

    const zero = await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 0 });
    expect(zero.status).toBe(422);
    expect(zero.body.error).toMatchObject({ code: 'parameter_invalid', message: 'Max uses must be greater than 0', param: 'max_uses' });
    expect((await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: -2 })).body.error.message).toBe('Max uses must be greater than 0');
    expect((await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 1.5 })).status).toBe(422);
    const noCustomer = await a.api.post('/v1/payment_claim_links', { customer_id: 'cust_missing' });
    expect(noCustomer.status).toBe(404);
    expect(noCustomer.body.error).toMatchObject({ message: 'Customer not found', param: 'customer_id' });
    expect((await a.api.post('/v1/payment_claim_links', {})).status).toBe(400);
    expect((await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, expires_at: '2020-01-01T00:00:00Z' })).body.error.param).toBe('expires_at');
    expect((await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, price_id: 'price_missing' })).status).toBe(404);

    const b = await newAccount(api.url);
    for (const c of [b.api, a.sandbox]) {
      expect((await c.get(`/v1/payment_claim_links/${res.body.id}`)).status).toBe(404);
      expect((await c.del(`/v1/payment_claim_links/${res.body.id}`)).status).toBe(404);
      expect((await c.get('/v1/payment_claim_links')).body.pagination.count).toBe(0);
      expect((await c.post('/v1/payment_claim_links', { customer_id: customer.id })).status).toBe(404);
    }
    expect((await a.api.del(`/v1/payment_claim_links/${res.body.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/payment_claim_links/${res.body.id}`)).status).toBe(404);
    expect((await anon().get(`/v1/public/payment_claim_links/${secretOf(res.body)}`)).status).toBe(404);
  });

  it('payment status: detected only for a payment to the customer\'s own address; paid lists what was paid since the link was made', async () => {
    const a = await newAccount(api.url);
    const { customer, wallet, accountWallet } = await customerWithWallet(a.api);
    const other = await customerWithWallet(a.api, 'other@x.io');
    // The account wallet's address: shared by every customer, so a payment to it is not shown as theirs.
    await a.api.post('/v1/crypto_addresses', { wallet_id: accountWallet.id, currency_code: 'ETH', address: ETH_EIP55_2 });
    const invoice = await invoiceOf(a.api, other.customer.id, '30.00', '2027-01-01');
    const shared = (await a.api.post('/v1/payment_claim_links', { customer_id: other.customer.id })).body;
    const seen = (to: string, key: string, currency: 'BTC' | 'ETH') => {
      const hash = txHash();
      return ChainPaymentRecord.create({ _id: `${currency}:${hash}:0`, currency, tx_hash: hash, output_index: 0, to_address: to, address_key: key, amount: '0.01', block_height: 50, block_hash: 'c'.repeat(64), timestamp: new Date(), status: 'pending' });
    };
    try {
      await seen(ETH_EIP55_2, ETH_EIP55_2.toLowerCase(), 'ETH');
      await ChainCursor.create({ _id: 'ETH', height: 52, hash: 'd'.repeat(64) });
      expect((await anon().get(`/v1/public/payment_claim_links/${secretOf(shared)}`)).body.payment_status.state).toBe('waiting');

      // The customer's own address: detected, 3 of 12 (the watcher scanned up to block 52).
      const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
      await invoiceOf(a.api, customer.id, '50.00', '2027-02-01');
      const own = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id })).body;
      await seen(BTC_BECH32, (await CryptoAddress.findById(btc.id).lean<{ address_key: string }>())!.address_key, 'BTC');
      await ChainCursor.create({ _id: 'BTC', height: 50, hash: 'e'.repeat(64) });
      expect((await anon().get(`/v1/public/payment_claim_links/${secretOf(own)}`)).body.payment_status).toEqual({ state: 'detected', confirmations: 1, confirmations_required: 2 });

      // Paid (recorded by hand): the invoice stays on the link's page, marked paid, and nothing is due.
      const eth = (await a.api.post('/v1/crypto_addresses', { wallet_id: other.wallet.id, currency_code: 'ETH', address: ETH_EIP55 })).body;
      expect((await a.api.post('/v1/crypto_transactions', { to_address_id: eth.id, amount: '0.01', currency_code: 'ETH', transaction_id: txHash() })).status).toBe(201);
      const paid = (await anon().get(`/v1/public/payment_claim_links/${secretOf(shared)}`)).body;
      expect(paid).toMatchObject({ amount_due: '0.00', payment_status: { state: 'paid' }, invoices: [{ id: invoice.id, status: 'paid', amount_due: '0.00' }] });
      expect(paid.pay_to.every((p: { amount: string | null; payment_uri: string }) => p.amount === null && !p.payment_uri.includes('?'))).toBe(true);
    } finally {
      await ChainPaymentRecord.deleteMany({});
      await ChainCursor.deleteMany({});
    }
  });

  it('lists the invoices paid since the link was made, by when they were paid, over the months since', async () => {
    const a = await newAccount(api.url);
    const { customer } = await customerWithWallet(a.api);
    const ids = async (link: any) => ((await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.invoices as { id: string; status: string }[]).map((i) => `${i.id}:${i.status}`).sort();
    // Paid by hand before the link, changed after it: not the link's (its updated_at is later than the link, its payment is not).
    const before = await invoiceOf(a.api, customer.id, '10.00', '2027-01-01');
    expect((await a.api.patch(`/v1/invoices/${before.id}`, { status: 'paid' })).status).toBe(200);
    const open = await invoiceOf(a.api, customer.id, '20.00', '2027-02-01');
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() })).body;
    expect((await a.api.patch(`/v1/invoices/${before.id}`, { due_date: '2027-03-01' })).status).toBe(200);
    expect(await ids(link)).toEqual([`${open.id}:pending`]);
    // Paid by hand after the link, and one made paid after it: both shown paid.
    expect((await a.api.patch(`/v1/invoices/${open.id}`, { status: 'paid' })).status).toBe(200);
    const createdPaid = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2027-04-01', status: 'paid', line_items: [] })).body;
    expect(await ids(link)).toEqual([`${open.id}:paid`, `${createdPaid.id}:paid`].sort());

    // A link made 40 days ago: every invoice paid since is its (the first one too), 35 days ago
    // (another month, most likely) included; 45 days ago not.
    const older = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, expires_at: new Date(Date.now() + 86_400_000).toISOString() })).body;
    const day = 86_400_000;
    await PaymentClaimLink.collection.updateOne({ _id: older.id } as never, { $set: { created_at: new Date(Date.now() - 40 * day) } });
    const paidDaysAgo = async (days: number, due: string) => {
      const inv = await invoiceOf(a.api, customer.id, '5.00', due);
      const at = new Date(Date.now() - days * day);
      await Invoice.collection.updateOne({ _id: inv.id } as never, { $set: { status: 'paid', ...paidMarks(customer.id, at) } });
      return inv.id as string;
    };
    const within = await paidDaysAgo(35, '2027-05-01');
    await paidDaysAgo(45, '2027-06-01');
    expect(await ids(older)).toEqual([`${before.id}:paid`, `${open.id}:paid`, `${createdPaid.id}:paid`, `${within}:paid`].sort());
    // Paid, then reopened: no longer listed as paid; still listed as open.
    expect((await a.api.patch(`/v1/invoices/${open.id}`, { status: 'pending' })).status).toBe(200);
    expect(await ids(link)).toEqual([`${open.id}:pending`, `${createdPaid.id}:paid`].sort());
  });

  it('the public flow: what to pay, proof of work, one claim per use, then unusable', async () => {
    const { a, customer, btc } = await setup();
    await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id })).body;
    const secret = secretOf(link);
    const pub = await anon().get(`/v1/public/payment_claim_links/${secret}`);
    expect(pub.status).toBe(200);
    expect(pub.body).toMatchObject({
      status: 'active',
      usable: true,
      amount_due: '100.00',
      invoices: [expect.objectContaining({ status: 'pending', due_date: '2027-01-01', amount_due: '100.00' })],
      payment_status: { state: 'waiting', confirmations: null, confirmations_required: null },
      pay_to: expect.arrayContaining([
        {
          currency: 'BTC',
          address: BTC_BECH32,
          explorer: { name: 'mempool.space', url: `https://mempool.space/address/${BTC_BECH32}` },
          amount: '0.002',
          payment_uri: `bitcoin:${BTC_BECH32}?amount=0.002`,
          qr_code_url: `/pay/${secret}/qr.svg?address=${BTC_BECH32}&amount=0.002`,
        },
      ]),
      quotes: expect.arrayContaining([{ currency: 'BTC', usd_price: '50000.00', amount: '0.002' }]),
      challenge: { algorithm: 'SHA-256', challenge: expect.any(String), salt: expect.any(String), signature: expect.any(String), maxnumber: expect.any(Number) },
    });
    expect(pub.body).not.toHaveProperty('id');
    expect((await anon().get('/v1/public/payment_claim_links/nope')).status).toBe(404);

    const claim = { transaction_id: txHash(), amount: '0.002', currency: 'BTC', to_address: BTC_BECH32 };
    const post = (body: object) => anon().post(`/v1/public/payment_claim_links/${secret}/claims`, body);
    const noPow = await post(claim);
    expect(noPow.status).toBe(422);
    expect(noPow.body.error).toMatchObject({ code: 'verification_failed', param: 'verification' });
    const forged = await post({ ...claim, verification: Buffer.from(JSON.stringify({ algorithm: 'SHA-256', challenge: 'x', number: 1, salt: 'y', signature: 'z' })).toString('base64') });
    expect(forged.body.error.code).toBe('verification_failed');
    const solution = await solve(pub.body.challenge);
    // Form errors come before the verification, so they do not spend the solution.
    const wrongAddress = await post({ ...claim, to_address: ETH_EIP55_2, currency: 'ETH', verification: solution });
    expect(wrongAddress.status).toBe(422);
    expect(wrongAddress.body.error.param).toBe('to_address');
    expect((await post({ ...claim, amount: '0.000000001', verification: solution })).body.error.param).toBe('amount');
    expect((await post({ ...claim, currency: 'DOGE', verification: solution })).body.error.param).toBe('currency');
    expect(ETH_EIP55).toMatch(/^0x/);
    const fresh = pub.body.challenge;
    const ok = await post({ ...claim, verification: solution });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      object: 'payment_claim',
      status: 'pending',
      amount: '0.002',
      transaction_id: claim.transaction_id,
      rejection_reason: null,
      approved_at: null,
      approved_by_id: null,
      crypto_transaction_id: null,
      customer_id: customer.id,
      currency: 'BTC',
      to_address_id: btc.id,
      to_address: BTC_BECH32,
    });
    expect(ok.body.id).toMatch(/^pymt_claim_/);
    expect(await Event.countDocuments({ event: 'payment_claim.submitted', 'payload.id': ok.body.id })).toBe(1);
    const used = (await a.api.get(`/v1/payment_claim_links/${link.id}`)).body;
    expect(used).toMatchObject({ status: 'used', use_count: 1, usable: false, expired: false, crypto_payment_claim_id: ok.body.id });
    expect(used.used_at).not.toBeNull();

    const again = await post({ ...claim, transaction_id: txHash(), verification: await solve((await anon().get(`/v1/public/payment_claim_links/${secret}`)).body.challenge ?? fresh) });
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('parameter_invalid');
    // A used link shows only its status: not the customer's invoices, addresses or amounts.
    expect((await anon().get(`/v1/public/payment_claim_links/${secret}`)).body).toEqual({ object: 'payment_claim_link', status: 'used', usable: false, expired: false });
  });

  it('an expired link shows only its status, not the open invoices or pay-to addresses', async () => {
    const { a, customer } = await setup();
    await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id })).body;
    const open = (await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body;
    expect(open.invoices).toHaveLength(1);
    expect(open.pay_to.length).toBeGreaterThan(0);
    // Past its expiry, before and after the workflow marks it.
    await PaymentClaimLink.updateOne({ _id: link.id }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const closed = { object: 'payment_claim_link', status: 'expired', usable: false, expired: true };
    expect((await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body).toEqual(closed);
    await PaymentClaimLink.updateOne({ _id: link.id }, { $set: { status: 'expired' } });
    const res = await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(closed);
  });

  it('a solution is bound to its link and is good for one claim', async () => {
    const { a, customer } = await setup();
    const l1 = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 5 })).body;
    const l2 = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 5 })).body;
    const ch1 = (await anon().get(`/v1/public/payment_claim_links/${secretOf(l1)}`)).body.challenge;
    const sol = await solve(ch1);
    const claim = { amount: '0.01', currency: 'BTC', to_address: BTC_BECH32 };
    expect((await anon().post(`/v1/public/payment_claim_links/${secretOf(l2)}/claims`, { ...claim, transaction_id: txHash(), verification: sol })).body.error.code).toBe('verification_failed');
    expect((await anon().post(`/v1/public/payment_claim_links/${secretOf(l1)}/claims`, { ...claim, transaction_id: txHash(), verification: sol })).status).toBe(201);
    expect((await anon().post(`/v1/public/payment_claim_links/${secretOf(l1)}/claims`, { ...claim, transaction_id: txHash(), verification: sol })).body.error.code).toBe('verification_failed');
    expect((await a.api.get(`/v1/payment_claim_links/${l1.id}`)).body).toMatchObject({ status: 'active', use_count: 1, usable: true });
  });
});

describe('proof-of-work hardening (issue 11)', () => {
  it('a spent solution is refused however it is re-encoded (trailing space, reordered keys, number as a string)', async () => {
    const { a, customer } = await setup();
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 10 })).body;
    const sol = await solve((await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.challenge);
    const claim = { amount: '0.01', currency: 'BTC', to_address: BTC_BECH32 };
    const post = (verification: string) => anon().post(`/v1/public/payment_claim_links/${secretOf(link)}/claims`, { ...claim, transaction_id: txHash(), verification });
    expect((await post(sol)).status).toBe(201);
    const decoded = JSON.parse(Buffer.from(sol, 'base64').toString());
    const reordered = Buffer.from(JSON.stringify({ signature: decoded.signature, salt: decoded.salt, number: decoded.number, challenge: decoded.challenge, algorithm: decoded.algorithm })).toString('base64');
    const numberAsString = Buffer.from(JSON.stringify({ ...decoded, number: String(decoded.number) })).toString('base64');
    for (const replay of [`${sol} `, ` ${sol}`, reordered, numberAsString]) {
      const res = await post(replay);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('verification_failed');
    }
    expect((await a.api.get(`/v1/payment_claim_links/${link.id}`)).body.use_count).toBe(1);
    // The spent set is in the database, keyed by the decoded signature, expiring with the challenge.
    const spent = await SpentClaimSolution.findById(decoded.signature).lean();
    expect(spent).toMatchObject({ link_id: link.id });
    expect(spent!.expires_at.getTime()).toBeGreaterThan(Date.now());
    expect(spent!.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 10 * 60_000);
  });

  it('signs with CLAIM_CHALLENGE_HMAC_KEY, else with one key kept in the database, so every process verifies the same challenges', async () => {
    expect(() => loadConfig({ CLAIM_CHALLENGE_HMAC_KEY: 'too short' })).toThrow(ConfigError);
    const configured = 'k'.repeat(40);
    expect(loadConfig({ CLAIM_CHALLENGE_HMAC_KEY: configured }).claimChallengeHmacKey).toBe(configured);
    expect(loadConfig({}).claimChallengeHmacKey).toBeNull();
    expect(await claimChallengeHmacKey(configured)).toBe(configured);
    const stored = await claimChallengeHmacKey(null);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    // A second process (a second call) reads the same key instead of making its own.
    expect(await Promise.all([claimChallengeHmacKey(null), claimChallengeHmacKey(null)])).toEqual([stored, stored]);

    const { a, customer } = await setup();
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 10 })).body;
    const fromConfigured = await solve(await createClaimChallenge(link.id, configured));
    expect(await verifyClaimSolution(fromConfigured, link.id, stored)).toBe(false);
    expect(await verifyClaimSolution(fromConfigured, link.id, configured)).toBe(true);
    // The app (no CLAIM_CHALLENGE_HMAC_KEY here) issues challenges with the stored key.
    const ch = (await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.challenge;
    expect(ch.signature).toBe(createHmac('sha256', stored).update(ch.challenge).digest('hex'));
  });
});

describe('customer deletion and payment claim links', () => {
  it('deleting a customer deletes its links (public routes 404, gone from the list) and signals their workflows closed', async () => {
    const { a, customer } = await setup();
    const other = (await a.api.post('/v1/customers', { email: 'other@x.io' })).body;
    const l1 = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id })).body;
    const l2 = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 3 })).body;
    const kept = (await a.api.post('/v1/payment_claim_links', { customer_id: other.id })).body;
    expect((await anon().get(`/v1/public/payment_claim_links/${secretOf(l1)}`)).status).toBe(200);

    // This app has no Temporal client; an app whose link workflows use a recording one makes the customer delete.
    const signalled: string[] = [];
    const recording = {
      taskQueue: 'unused',
      client: { workflow: { getHandle: (id: string) => ({ signal: async (signal: { name: string }) => void signalled.push(`${id} ${signal.name}`) }) } },
    } as unknown as TemporalContext;
    const deleting = await startTestApi({ workflowOverrides: { claimLink: claimLinkWorkflows(recording, createWorkflowStarts(recording, pino({ level: 'silent' }))) } });
    let del;
    try {
      del = await client(deleting.url, a.token).del(`/v1/customers/${customer.id}`);
    } finally {
      await deleting.close();
    }
    expect(del.status).toBe(204);
    expect(signalled.sort()).toEqual([`claim-link-${l1.id} claimLinkClosed`, `claim-link-${l2.id} claimLinkClosed`].sort());

    for (const link of [l1, l2]) {
      const pub = await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`);
      expect(pub.status).toBe(404);
      expect(pub.body.error).toMatchObject({ param: 'secret' });
      const claim = await anon().post(`/v1/public/payment_claim_links/${secretOf(link)}/claims`, { transaction_id: txHash(), amount: '0.001', currency: 'BTC', to_address: BTC_BECH32 });
      expect(claim.status).toBe(404);
      expect((await a.api.get(`/v1/payment_claim_links/${link.id}`)).status).toBe(404);
    }
    // Another customer's link stays.
    expect((await a.api.get('/v1/payment_claim_links')).body).toMatchObject({ payment_claim_links: [expect.objectContaining({ id: kept.id })], pagination: { count: 1 } });
    expect((await anon().get(`/v1/public/payment_claim_links/${secretOf(kept)}`)).status).toBe(200);
  });
});

describe('payment claims', () => {
  async function submitted(n = 1) {
    const s = await setup();
    const link = (await s.a.api.post('/v1/payment_claim_links', { customer_id: s.customer.id, max_uses: n })).body;
    const claims = [];
    for (let i = 0; i < n; i++) {
      const ch = (await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.challenge;
      const res = await anon().post(`/v1/public/payment_claim_links/${secretOf(link)}/claims`, { transaction_id: txHash(), amount: '0.002', currency: 'BTC', to_address: BTC_BECH32, verification: await solve(ch) });
      expect(res.status).toBe(201);
      claims.push(res.body);
    }
    return { ...s, link, claims };
  }

  /** A claim through a fresh link of `s`'s customer. */
  async function claimOf(s: Awaited<ReturnType<typeof setup>>, body: { transaction_id: string; amount: string; currency: string; to_address: string }) {
    const link = (await s.a.api.post('/v1/payment_claim_links', { customer_id: s.customer.id })).body;
    const ch = (await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.challenge;
    return anon().post(`/v1/public/payment_claim_links/${secretOf(link)}/claims`, { ...body, verification: await solve(ch) });
  }

  it('a claim naming a payment already recorded, in any spelling of its hash, is refused at approval (naming the transaction) and stays pending', async () => {
    const s = await setup();
    const invoice = await invoiceOf(s.a.api, s.customer.id, '100.00', '2027-01-01');
    const next = await invoiceOf(s.a.api, s.customer.id, '30.00', '2027-02-01');
    // Recorded as the watcher stores it: 0x + lowercase hex.
    const hash = txHash('ETH');
    const recorded = await s.a.api.post('/v1/crypto_transactions', { to_address_id: s.eth.id, amount: '0.0333', currency_code: 'ETH', transaction_id: hash });
    expect(recorded.status).toBe(201);
    // The customer names the same payment in capitals without 0x: accepted as a claim, canonical.
    const claim = await claimOf(s, { transaction_id: hash.slice(2).toUpperCase(), amount: '0.0333', currency: 'ETH', to_address: ETH_EIP55 });
    expect(claim.status).toBe(201);
    expect(claim.body.transaction_id).toBe(hash);
    const approval = await s.a.api.post(`/v1/crypto_payment_claims/${claim.body.id}/approval`);
    expect(approval.status).toBe(422);
    expect(approval.body.error).toMatchObject({ code: 'parameter_invalid', param: 'transaction_id' });
    expect(approval.body.error.message).toContain(recorded.body.id);
    // Nothing recorded twice, the next invoice untouched, the claim still pending and rejectable.
    expect(await CryptoTransaction.countDocuments({ to_address_id: s.eth.id })).toBe(1);
    expect((await s.a.api.get(`/v1/crypto_payment_claims/${claim.body.id}`)).body).toMatchObject({ status: 'pending', crypto_transaction_id: null, approved_at: null });
    expect(await PaymentClaimDecision.exists({ _id: claim.body.id })).toBeNull();
    const rejected = await s.a.api.post(`/v1/crypto_payment_claims/${claim.body.id}/rejection`, { reason: 'already recorded as ' + recorded.body.id });
    expect(rejected.body).toMatchObject({ status: 'rejected', rejection_reason: `already recorded as ${recorded.body.id}` });
    expect((await s.a.api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
    expect((await s.a.api.get(`/v1/invoices/${next.id}`)).body).toMatchObject({ status: 'pending', amount_paid: '0.00' });

    // BTC: a claim with 0x on the txid is stored without it.
    const btcHash = txHash('BTC');
    const btcClaim = await claimOf(s, { transaction_id: `0X${btcHash.toUpperCase()}`, amount: '0.0001', currency: 'BTC', to_address: BTC_BECH32 });
    expect(btcClaim.body.transaction_id).toBe(btcHash);
  });

  it('a claim whose transaction id is not a hash of its currency is refused: 422 on transaction_id, no use of the link', async () => {
    const s = await setup();
    const link = (await s.a.api.post('/v1/payment_claim_links', { customer_id: s.customer.id })).body;
    const ch = (await anon().get(`/v1/public/payment_claim_links/${secretOf(link)}`)).body.challenge;
    const solution = await solve(ch);
    for (const [currency, to_address, transaction_id] of [['BTC', BTC_BECH32, 'tx-1'], ['ETH', ETH_EIP55, '0x1234'], ['BTC', BTC_BECH32, `${txHash('BTC')}ab`]]) {
      const res = await anon().post(`/v1/public/payment_claim_links/${secretOf(link)}/claims`, { transaction_id, amount: '0.001', currency, to_address, verification: solution });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'transaction_id' });
    }
    expect((await s.a.api.get(`/v1/payment_claim_links/${link.id}`)).body).toMatchObject({ use_count: 0, usable: true });
    // The same solution still works: a form error does not spend it.
    expect((await anon().post(`/v1/public/payment_claim_links/${secretOf(link)}/claims`, { transaction_id: txHash('BTC'), amount: '0.001', currency: 'BTC', to_address: BTC_BECH32, verification: solution })).status).toBe(201);
  });

  it('approval records a manual_entry transaction and allocates it; a second decision is refused', async () => {
    const { a, customer, claims, btc } = await submitted(1);
    const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const res = await a.api.post(`/v1/crypto_payment_claims/${claims[0].id}/approval`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', approved_by_id: a.user_id, rejection_reason: null });
    expect(typeof res.body.approved_by_id).toBe('number');
    expect(res.body.approved_at).not.toBeNull();
    const tx = (await a.api.get(`/v1/crypto_transactions/${res.body.crypto_transaction_id}`)).body;
    expect(tx).toMatchObject({ transaction_source: 'manual_entry', amount: '0.002', currency: 'BTC', to_address_id: btc.id, transaction_id: claims[0].transaction_id, usd_value: '100.00' });
    expect(tx.allocations).toEqual([expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })]);
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
    expect(await Event.countDocuments({ event: 'payment_claim.approved', 'payload.id': claims[0].id })).toBe(1);
    expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);
    for (const path of ['approval', 'rejection']) {
      const again = await a.api.post(`/v1/crypto_payment_claims/${claims[0].id}/${path}`);
      expect(again.status).toBe(422);
      expect(again.body.error).toMatchObject({ code: 'parameter_invalid', message: 'Payment claim is not pending', param: 'status' });
    }
  });

  it('rejection with the default or a given reason; list with status filter; 404 across accounts and scopes', async () => {
    const { a, claims } = await submitted(3);
    const r1 = await a.api.post(`/v1/crypto_payment_claims/${claims[0].id}/rejection`);
    expect(r1.status).toBe(200);
    expect(r1.body).toMatchObject({ status: 'rejected', rejection_reason: 'No reason provided', approved_by_id: a.user_id, crypto_transaction_id: null });
    expect(r1.body.approved_at).not.toBeNull();
    const r2 = await a.api.post(`/v1/crypto_payment_claims/${claims[1].id}/rejection`, { reason: 'No such transaction' });
    expect(r2.body.rejection_reason).toBe('No such transaction');
    expect(await Event.countDocuments({ event: 'payment_claim.rejected', 'payload.id': claims[0].id })).toBe(1);
    const list = (await a.api.get('/v1/crypto_payment_claims')).body;
    expect(list.pagination.count).toBe(3);
    expect(list.crypto_payment_claims.map((c: any) => c.id)).toEqual([claims[2].id, claims[1].id, claims[0].id]);
    expect((await a.api.get('/v1/crypto_payment_claims?status=rejected')).body.crypto_payment_claims.map((c: any) => c.id).sort()).toEqual([claims[0].id, claims[1].id].sort());
    expect((await a.api.get('/v1/crypto_payment_claims?status=pending')).body.crypto_payment_claims.map((c: any) => c.id)).toEqual([claims[2].id]);
    expect((await a.api.get('/v1/crypto_payment_claims?status=bogus')).status).toBe(422);
    expect((await a.api.get(`/v1/crypto_payment_claims/${claims[2].id}`)).body).toEqual(claims[2]);
    const b = await newAccount(api.url);
    for (const c of [b.api, a.sandbox]) {
      expect((await c.get(`/v1/crypto_payment_claims/${claims[2].id}`)).status).toBe(404);
      expect((await c.post(`/v1/crypto_payment_claims/${claims[2].id}/approval`)).status).toBe(404);
      expect((await c.post(`/v1/crypto_payment_claims/${claims[2].id}/rejection`)).status).toBe(404);
      expect((await c.get('/v1/crypto_payment_claims')).body.pagination.count).toBe(0);
    }
    expect((await a.api.get(`/v1/crypto_payment_claims/${claims[2].id}`)).body.status).toBe('pending');
  });

  it('concurrent decisions: exactly one wins; concurrent submissions never exceed max_uses', async () => {
    const { a, claims, customer } = await submitted(1);
    const [approval1, rejection, approval2] = await Promise.all([
      a.api.post(`/v1/crypto_payment_claims/${claims[0].id}/approval`),
      a.api.post(`/v1/crypto_payment_claims/${claims[0].id}/rejection`),
      a.api.post(`/v1/crypto_payment_claims/${claims[0].id}/approval`),
    ]);
    if (rejection.status === 200) {
      expect([approval1.status, approval2.status]).toEqual([422, 422]);
      expect([approval1, approval2].every((r) => r.body.error.message === 'Payment claim is not pending')).toBe(true);
      // The rejection won: nothing was recorded or announced as paid.
      expect(await CryptoTransaction.countDocuments({ payment_claim_id: claims[0].id })).toBe(0);
      expect(await Event.countDocuments({ event: 'payment_claim.approved', 'payload.id': claims[0].id })).toBe(0);
      expect((await a.api.get(`/v1/crypto_payment_claims/${claims[0].id}`)).body).toMatchObject({ status: 'rejected', crypto_transaction_id: null });
    } else {
      // An approval arriving while the first is still on its way finishes the same job (one transaction).
      expect(rejection.status).toBe(422);
      const won = [approval1, approval2].filter((r) => r.status === 200);
      expect(won.length).toBeGreaterThanOrEqual(1);
      expect([approval1, approval2].every((r) => r.status === 200 || r.status === 422)).toBe(true);
      expect(new Set(won.map((r) => r.body.crypto_transaction_id)).size).toBe(1);
      expect(await CryptoTransaction.countDocuments({ payment_claim_id: claims[0].id })).toBe(1);
      expect(await Event.countDocuments({ event: 'payment_claim.approved', 'payload.id': claims[0].id })).toBe(1);
    }
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 2 })).body;
    const secret = secretOf(link);
    const solutions = [];
    for (let i = 0; i < 5; i++) solutions.push(await solve((await anon().get(`/v1/public/payment_claim_links/${secret}`)).body.challenge));
    const subs = await Promise.all(
      solutions.map((verification) => anon().post(`/v1/public/payment_claim_links/${secret}/claims`, { transaction_id: txHash(), amount: '0.001', currency: 'BTC', to_address: BTC_BECH32, verification })),
    );
    // Two take the uses; each of the other three gets the documented 422 (not a 500 or anything else).
    expect(subs.map((r) => r.status).sort()).toEqual([201, 201, 422, 422, 422]);
    for (const r of subs.filter((s) => s.status === 422)) {
      // (The status in parentheses is the one the loser read: "active" when it read before the last use.)
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'secret', message: expect.stringMatching(/^This payment link can no longer be used \((active|used)\)$/) });
    }
    expect(await PaymentClaim.countDocuments({ payment_claim_link_id: link.id })).toBe(2);
    expect((await a.api.get(`/v1/payment_claim_links/${link.id}`)).body).toMatchObject({ status: 'used', use_count: 2 });
  });

  it('submissions at once to a multi-use link take every use, each once', async () => {
    // Before, a submission wrote the link twice (its use, then its claim id), and FerretDB v1's
    // write-back of the second could put back an older use count: later submissions then waited
    // for a count that never moved and were refused with uses left. (The service: over HTTP the
    // proof-of-work checks spread the submissions out.)
    const deps = testDependencies({ env: { CLAIM_VERIFICATION: 'off', HOST: '127.0.0.1' } });
    const { a, customer } = await setup();
    for (let round = 0; round < 4; round++) {
      const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 6 })).body;
      const submit = () => submitPaymentClaim(deps, secretOf(link), { transaction_id: txHash(), amount: '0.001', currency: 'BTC', to_address: BTC_BECH32 });
      const claims = await Promise.all(Array.from({ length: 6 }, submit));
      const after = (await a.api.get(`/v1/payment_claim_links/${link.id}`)).body;
      expect(after).toMatchObject({ status: 'used', use_count: 6 });
      expect(claims.map((c) => c.id)).toContain(after.crypto_payment_claim_id);
      await expect(submit()).rejects.toThrow('can no longer be used');
      expect(await PaymentClaim.countDocuments({ payment_claim_link_id: link.id })).toBe(6);
    }
  });

  it('an approval that stopped between its decision and its transaction is finished by the next approval, once', async () => {
    const { a, customer, claims } = await submitted(3);
    const invoice = await invoiceOf(a.api, customer.id, '200.00', '2027-01-01');
    const approve = (c: any) => a.api.post(`/v1/crypto_payment_claims/${c.id}/approval`);

    // Crashed after the decision and the status write: approved, no transaction.
    await PaymentClaimDecision.create({ _id: claims[0].id, decision: 'approved', created_at: new Date() });
    await PaymentClaim.updateOne({ _id: claims[0].id }, { $set: { status: 'approved', approved_at: new Date(), approved_by_id: a.user_id } });
    // Crashed right after the decision: still pending, but decided.
    await PaymentClaimDecision.create({ _id: claims[1].id, decision: 'approved', created_at: new Date() });
    expect((await a.api.post(`/v1/crypto_payment_claims/${claims[1].id}/rejection`)).status).toBe(422);
    for (const c of [claims[0], claims[1]]) {
      const res = await approve(c);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'approved', approved_by_id: a.user_id, crypto_transaction_id: claimTransactionId(c.id) });
      expect((await a.api.get(`/v1/crypto_transactions/${res.body.crypto_transaction_id}`)).body).toMatchObject({ transaction_id: c.transaction_id, allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })] });
      // Finished: a further approval is refused, as for any decided claim.
      expect((await approve(c)).body.error).toMatchObject({ message: 'Payment claim is not pending' });
    }
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '200.00' });

    // A failure after the transaction is recorded leaves the approval standing; the retry links that same transaction.
    const realLink = PaymentClaim.findOneAndUpdate.bind(PaymentClaim);
    let failed = false;
    const linkSpy = jest.spyOn(PaymentClaim, 'findOneAndUpdate').mockImplementation(((filter: any, update: any, opts: any) => {
      if (!failed && update?.$set?.crypto_transaction_id) {
        failed = true;
        throw new Error('connection reset');
      }
      return realLink(filter, update, opts);
    }) as never);
    try {
      expect((await approve(claims[2])).status).toBe(500);
    } finally {
      linkSpy.mockRestore();
    }
    expect((await a.api.get(`/v1/crypto_payment_claims/${claims[2].id}`)).body).toMatchObject({ status: 'approved', crypto_transaction_id: null });
    const retried = await approve(claims[2]);
    expect(retried.status).toBe(200);
    expect(retried.body.crypto_transaction_id).toBe(claimTransactionId(claims[2].id));
    for (const c of claims) {
      expect(await CryptoTransaction.countDocuments({ payment_claim_id: c.id })).toBe(1);
      expect(await Event.countDocuments({ event: 'payment_claim.approved', 'payload.id': c.id })).toBe(1);
      expect(await Event.countDocuments({ event: 'crypto_transaction.received', 'payload.id': claimTransactionId(c.id) })).toBe(1);
    }
  });

  it('serves the pay page: the form while usable, the state once used, 404 for an unknown secret', async () => {
    const s = await setup();
    const open = (await s.a.api.post('/v1/payment_claim_links', { customer_id: s.customer.id })).body;
    const res = await fetch(`${api.url}/pay/${secretOf(open)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('<form id="claim-form"');
    expect(html).toContain(`data-api="/v1/public/payment_claim_links/${secretOf(open)}"`);
    const { link } = await submitted(1);
    const used = await (await fetch(`${api.url}/pay/${secretOf(link)}`)).text();
    expect(used).toContain('already been used');
    expect(used).not.toContain('<form');
    expect(used).not.toContain(BTC_BECH32);
    // An unknown secret: a page that says the link does not exist, with a 404.
    const unknown = await fetch(`${api.url}/pay/${'n'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('does not exist');
  });
});
