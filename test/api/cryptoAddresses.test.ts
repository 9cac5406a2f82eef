import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { Event } from '../../src/models/event';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';
import { PaymentClaim } from '../../src/models/paymentClaim';
import { BTC_BECH32, BTC_P2PKH, BTC_P2SH, BTC_TAPROOT, BTC_TESTNET_BECH32, BTC_TESTNET_P2PKH, ETH_EIP55, customerWithWallet, txHash } from '../crypto/helpers';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { CLAIM_VERIFICATION: 'false' });
});
afterAll(() => api.close());

describe('crypto addresses', () => {
  it('creates BTC and ETH addresses with the explorer object, the currency alias and the event; wallets list them', async () => {
    const a = await newAccount(api.url);
    const { customer, wallet, accountWallet } = await customerWithWallet(a.api);
    const btc = await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
    expect(btc.status).toBe(201);
    expect(btc.body).toEqual({
      id: expect.stringMatching(/^addr_[0-9A-Za-z]{24}$/),
      object: 'crypto_address',
      address: BTC_BECH32,
      currency: 'BTC',
      wallet_id: wallet.id,
      explorer: { name: 'mempool.space', url: `https://mempool.space/address/${BTC_BECH32}` },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const eth = await a.api.post('/v1/crypto_addresses', { wallet_id: accountWallet.id, currency: 'ETH', address: ETH_EIP55 });
    expect(eth.status).toBe(201);
    expect(eth.body).toMatchObject({ currency: 'ETH', address: ETH_EIP55, explorer: { name: 'Etherscan', url: `https://etherscan.io/address/${ETH_EIP55}` } });
    for (const addr of [BTC_P2PKH, BTC_P2SH, BTC_TAPROOT]) {
      expect((await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: addr })).status).toBe(201);
    }
    expect((await a.api.get(`/v1/crypto_addresses/${btc.body.id}`)).body).toEqual(btc.body);
    const list = (await a.api.get('/v1/crypto_addresses')).body;
    expect(list.pagination.count).toBe(5);
    expect(list.crypto_addresses[4]).toEqual(btc.body);
    const w = (await a.api.get(`/v1/wallets/${wallet.id}`)).body;
    expect(w.crypto_address_count).toBe(4);
    expect(w.crypto_addresses.map((x: any) => x.address)).toContain(BTC_BECH32);
    const ev = await Event.findOne({ event: 'crypto_address.created', 'payload.id': btc.body.id }).lean();
    expect(ev?.payload).toMatchObject({ object: 'crypto_address', address: BTC_BECH32 });
    expect(customer.id).toMatch(/^cust_/);
  });

  it('answers every error row of the spec', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    const { wallet } = await customerWithWallet(a.api);
    const foreign = await customerWithWallet(b.api, 'other@x.io');
    const post = (body: object) => a.api.post('/v1/crypto_addresses', body);

    const noWallet = await post({ wallet_id: 'wall_missing', currency_code: 'BTC', address: BTC_P2PKH });
    expect(noWallet.status).toBe(404);
    expect(noWallet.body.error).toMatchObject({ code: 'resource_not_found', message: 'Wallet not found', param: 'wallet_id' });
    expect((await post({ wallet_id: foreign.wallet.id, currency_code: 'BTC', address: BTC_P2PKH })).status).toBe(404);

    const doge = await post({ wallet_id: wallet.id, currency_code: 'DOGE', address: 'DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L' });
    expect(doge.status).toBe(404);
    expect(doge.body.error).toMatchObject({ code: 'resource_not_found', message: 'Currency not found: DOGE', param: 'currency_code' });
    const noCurrency = await post({ wallet_id: wallet.id, address: BTC_P2PKH });
    expect(noCurrency.status).toBe(400);
    expect(noCurrency.body.error.param).toBe('currency_code');
    expect((await post({ wallet_id: wallet.id, currency_code: 'BTC' })).status).toBe(400);

    const bad = await post({ wallet_id: wallet.id, currency_code: 'BTC', address: BTC_P2PKH.slice(0, -1) + '3' });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({ type: 'address_error', code: 'address_invalid', param: 'address' });
    const badEth = await post({ wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55.replace('a', 'A') });
    expect(badEth.status).toBe(422);
    expect(badEth.body.error.code).toBe('address_invalid');
    expect((await post({ wallet_id: wallet.id, currency_code: 'ETH', address: BTC_P2PKH })).body.error.code).toBe('address_invalid');
    // Testnet forms: refused in production, accepted in a sandbox.
    const testnet = await post({ wallet_id: wallet.id, currency_code: 'BTC', address: BTC_TESTNET_BECH32 });
    expect(testnet.status).toBe(422);
    expect(testnet.body.error.code).toBe('address_invalid');

    expect((await post({ wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55 })).status).toBe(201);
    const taken = await post({ wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55.toLowerCase() });
    expect(taken.status).toBe(422);
    expect(taken.body.error).toMatchObject({ code: 'parameter_invalid', message: 'Address is already in use for this currency in your account', param: 'address' });
    expect((await post({ wallet_id: wallet.id, currency_code: 'ETH', address: '0x' + ETH_EIP55.slice(2).toUpperCase() })).status).toBe(422);
    // Another account, and the sandbox scope, have their own uniqueness.
    expect((await b.api.post('/v1/crypto_addresses', { wallet_id: foreign.wallet.id, currency_code: 'ETH', address: ETH_EIP55 })).status).toBe(201);
    const sandboxWallet = (await a.sandbox.get('/v1/wallets')).body.wallets[0];
    expect((await a.sandbox.post('/v1/crypto_addresses', { wallet_id: sandboxWallet.id, currency_code: 'ETH', address: ETH_EIP55 })).status).toBe(201);
    const sbTestnet = await a.sandbox.post('/v1/crypto_addresses', { wallet_id: sandboxWallet.id, currency_code: 'BTC', address: BTC_TESTNET_P2PKH });
    expect(sbTestnet.status).toBe(201);
    expect(sbTestnet.body.explorer).toEqual({ name: 'mempool.space', url: `https://mempool.space/testnet/address/${BTC_TESTNET_P2PKH}` });
    expect((await a.sandbox.post('/v1/crypto_addresses', { wallet_id: sandboxWallet.id, currency_code: 'BTC', address: BTC_TESTNET_BECH32 })).status).toBe(201);
    // The production wallet is not reachable from the sandbox.
    expect((await a.sandbox.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_P2SH })).status).toBe(404);
  });

  it('is a 404 from another account or the other scope, for every route', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    const { wallet } = await customerWithWallet(a.api);
    const addr = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_P2PKH })).body;
    for (const c of [b.api, a.sandbox]) {
      expect((await c.get(`/v1/crypto_addresses/${addr.id}`)).status).toBe(404);
      expect((await c.del(`/v1/crypto_addresses/${addr.id}`)).status).toBe(404);
      expect((await c.get('/v1/crypto_addresses')).body.pagination.count).toBe(0);
    }
    expect((await a.api.get(`/v1/crypto_addresses/${addr.id}`)).status).toBe(200);
  });

  it('deleting an address deletes its transactions and claims; deleting a customer deletes its addresses', async () => {
    const a = await newAccount(api.url);
    const { customer, wallet } = await customerWithWallet(a.api);
    const addr = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_P2PKH })).body;
    const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: addr.id, amount: '0.01', currency_code: 'BTC', transaction_id: txHash() });
    expect(tx.status).toBe(201);
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id })).body;
    const secret = link.link.split('/pay/')[1];
    const claim = await a.api.post(`/v1/public/payment_claim_links/${secret}/claims`, { transaction_id: txHash(), amount: '0.02', currency: 'BTC', to_address: BTC_P2PKH });
    expect(claim.status).toBe(201);
    expect(await CryptoTransaction.countDocuments({ to_address_id: addr.id })).toBe(1);
    expect(await PaymentClaim.countDocuments({ to_address_id: addr.id })).toBe(1);

    expect((await a.api.del(`/v1/crypto_addresses/${addr.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/crypto_addresses/${addr.id}`)).status).toBe(404);
    expect((await a.api.get(`/v1/crypto_transactions/${tx.body.id}`)).status).toBe(404);
    expect((await a.api.get(`/v1/crypto_payment_claims/${claim.body.id}`)).status).toBe(404);
    expect(await Event.countDocuments({ event: 'crypto_address.deleted', 'payload.id': addr.id })).toBe(1);

    const addr2 = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55 })).body;
    await a.api.post('/v1/crypto_transactions', { to_address_id: addr2.id, amount: '1.5', currency_code: 'ETH', transaction_id: txHash() });
    expect((await a.api.del(`/v1/customers/${customer.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/crypto_addresses/${addr2.id}`)).status).toBe(404);
    expect(await CryptoTransaction.countDocuments({ to_address_id: addr2.id })).toBe(0);
    // The address is free again.
    const { wallet: w2 } = await customerWithWallet(a.api, 'again@x.io');
    expect((await a.api.post('/v1/crypto_addresses', { wallet_id: w2.id, currency_code: 'ETH', address: ETH_EIP55 })).status).toBe(201);
  });
});
