import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { Event } from '../../src/models/event';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('products', () => {
  it('creates with a trimmed name, allows unicode and duplicates', async () => {
    const a = await newAccount(api.url);
    const res = await a.api.post('/v1/products', { name: '  Café ☕ Pro 🚀  ' });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Café ☕ Pro 🚀');
    expect(res.body.id).toMatch(/^prod_/);
    expect((await a.api.post('/v1/products', { name: 'Café ☕ Pro 🚀' })).status).toBe(201);
  });

  it('refuses missing, blank, non-string and over-long names', async () => {
    const a = await newAccount(api.url);
    const missing = await a.api.post('/v1/products', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'parameter_missing', param: 'name' });
    const blank = await a.api.post('/v1/products', { name: '   ' });
    expect(blank.status).toBe(422);
    expect(blank.body.errors).toEqual({ name: ["can't be blank"] });
    expect((await a.api.post('/v1/products', { name: ['x'] })).status).toBe(422);
    expect((await a.api.post('/v1/products', { name: 'x'.repeat(501) })).status).toBe(422);
    expect((await a.api.get('/v1/products')).body.pagination.count).toBe(0);
  });

  it('updates, deletes with its prices, and writes the events', async () => {
    const a = await newAccount(api.url);
    const p = (await a.api.post('/v1/products', { name: 'Basic' })).body;
    const price = (await a.api.post('/v1/prices', { product_id: p.id, amount: 500 })).body;
    const upd = await a.api.patch(`/v1/products/${p.id}`, { name: ' Premium ' });
    expect(upd.body.name).toBe('Premium');
    expect((await a.api.patch(`/v1/products/${p.id}`, { name: '' })).status).toBe(422);
    expect((await a.api.del(`/v1/products/${p.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/products/${p.id}`)).status).toBe(404);
    expect((await a.api.get(`/v1/prices/${price.id}`)).status).toBe(404);
    expect((await a.api.del(`/v1/products/${p.id}`)).status).toBe(404);
    const events = await Event.find({ account_id: a.account_id }).lean();
    const names = events.map((e) => `${e.event}:${(e.payload as any).id}`);
    expect(names).toEqual(
      expect.arrayContaining([
        `product.created:${p.id}`,
        `product.updated:${p.id}`,
        `product.deleted:${p.id}`,
        `price.created:${price.id}`,
        `price.deleted:${price.id}`,
      ]),
    );
    expect(events.find((e) => e.event === 'product.deleted')!.payload).toMatchObject({ object: 'product', name: 'Premium' });
  });
});
