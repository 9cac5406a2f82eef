/**
 * The watcher's copy of the watched addresses (services/crypto/watchedAddresses.ts): read again when an
 * address is added or removed through the API, kept otherwise, and read again when it is older
 * than its maximum age.
 */
import { Wallet as EthWallet } from 'ethers';
import { useTestDatabase } from '../../support/db';
import { newAccount, startTestApi, TestApi } from '../../support/api';
import { customerWithWallet } from '../../crypto/helpers';
import { createWatchedAddresses } from '../../../src/services/crypto/watchedAddresses';
import { CryptoAddress } from '../../../src/models/cryptoAddress';
import { newId, ID_PREFIX } from '../../../src/lib/ids';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

/** An address written straight to the collection, bypassing the service (and its version write). */
async function insertBehindTheServicesBack(): Promise<string> {
  const key = EthWallet.createRandom().address.toLowerCase();
  await CryptoAddress.collection.insertOne({ _id: newId(ID_PREFIX.cryptoAddress) as any, account_id: 'acct_other', sandbox: null, wallet_id: 'wal_other', currency: 'ETH', address: key, address_key: key });
  return key;
}

test('an address added or removed through the API is watched, or no longer, at the next read', async () => {
  const owner = await newAccount(api.url);
  const { wallet } = await customerWithWallet(owner.api);
  const watched = createWatchedAddresses();
  const address = EthWallet.createRandom().address;
  expect((await watched.keys('ETH')).has(address.toLowerCase())).toBe(false);

  const created = await owner.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address });
  expect(created.status).toBe(201);
  expect((await watched.keys('ETH')).has(address.toLowerCase())).toBe(true);
  // Another currency's set did not change with it.
  expect((await watched.keys('BTC')).has(address.toLowerCase())).toBe(false);

  expect((await owner.api.del(`/v1/crypto_addresses/${created.body.id}`)).status).toBe(204);
  expect((await watched.keys('ETH')).has(address.toLowerCase())).toBe(false);
});

test('the copy is kept while no address changes, and read again once older than its maximum age', async () => {
  let now = 1_000_000;
  const watched = createWatchedAddresses({ maxAgeMs: 60_000, now: () => now });
  await watched.keys('ETH');
  const key = await insertBehindTheServicesBack();
  now += 59_000;
  // Not re-read: nothing said the set changed (this is what spares a poll the whole read).
  expect((await watched.keys('ETH')).has(key)).toBe(false);
  now += 1_000;
  expect((await watched.keys('ETH')).has(key)).toBe(true);
});
