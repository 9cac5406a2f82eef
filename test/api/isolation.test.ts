/** For every route: another account and the other scope get 404 and never see A's data in lists. */
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi, Client } from '../support/api';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('account and scope isolation', () => {
  it('hides every resource of account A from account B and from A\'s sandbox', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    const customer = (await a.api.post('/v1/customers', { email: 'iso@x.io' })).body;
    const product = (await a.api.post('/v1/products', { name: 'Iso' })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 100 })).body;
    const wallet = (await a.api.get('/v1/wallets')).body.wallets[0];

    const resources: Array<[string, string, string, Record<string, unknown>]> = [
      ['customers', customer.id, 'customers', { email: 'steal@x.io' }],
      ['products', product.id, 'products', { name: 'Stolen' }],
      ['prices', price.id, 'prices', { active: false }],
      ['wallets', wallet.id, 'wallets', {}],
    ];
    const outsiders: Array<[string, Client]> = [['other account', b.api], ['other scope', a.sandbox], ['other account sandbox', b.sandbox]];
    for (const [who, c] of outsiders) {
      for (const [path, id, key, patch] of resources) {
        const get = await c.get(`/v1/${path}/${id}`);
        expect([who, path, get.status]).toEqual([who, path, 404]);
        expect(get.body.error.code).toBe('resource_not_found');
        const list = await c.get(`/v1/${path}`);
        expect(list.body[key].map((x: any) => x.id)).not.toContain(id);
        if (path !== 'wallets') {
          expect([who, path, 'patch', (await c.patch(`/v1/${path}/${id}`, patch)).status]).toEqual([who, path, 'patch', 404]);
          expect([who, path, 'delete', (await c.del(`/v1/${path}/${id}`)).status]).toEqual([who, path, 'delete', 404]);
        }
      }
    }
    // Still intact for the owner.
    expect((await a.api.get(`/v1/customers/${customer.id}`)).body.email).toBe('iso@x.io');
    expect((await a.api.get(`/v1/products/${product.id}`)).body.name).toBe('Iso');
    expect((await a.api.get(`/v1/prices/${price.id}`)).body.active).toBe(true);
  });
});

describe('wallets', () => {
  it('lists the account wallet and customer wallets, newest first, read-only', async () => {
    const a = await newAccount(api.url);
    const c1 = (await a.api.post('/v1/customers', { email: 'w1@x.io' })).body;
    const c2 = (await a.api.post('/v1/customers', { email: 'w2@x.io' })).body;
    const list = await a.api.get('/v1/wallets');
    expect(list.body.pagination).toEqual({ page: 1, pages: 1, count: 3 });
    const owners = list.body.wallets.map((w: any) => [w.owner_type, w.owner_id]);
    expect(owners).toEqual([['customer', c2.id], ['customer', c1.id], ['account', a.account_id]]);
    const w = list.body.wallets[0];
    expect(w).toMatchObject({ object: 'wallet', crypto_addresses: [], crypto_address_count: 0 });
    expect(w.id).toMatch(/^wall_/);
    expect((await a.api.get(`/v1/wallets/${w.id}`)).body).toEqual(w);
    // Read-only: a write method on a wallet path is 405 method_not_allowed (docs/adr/0101-routes-and-mounts.md).
    const post = await a.api.post('/v1/wallets', {});
    expect([post.status, post.body.error?.code]).toEqual([405, 'method_not_allowed']);
    expect((await a.api.del(`/v1/wallets/${w.id}`)).status).toBe(405);
  });
});
