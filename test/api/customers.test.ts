import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { Event } from '../../src/models/event';
import { Wallet } from '../../src/models/wallet';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('customers', () => {
  it('creates a customer with a lowercased email, its wallet and the events', async () => {
    const a = await newAccount(api.url);
    const res = await a.api.post('/v1/customers', { email: '  Ada@Example.COM ', first_name: 'Ada', last_name: 'Lovelace' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' });
    expect(res.body.id).toMatch(/^cust_[0-9A-Za-z]{24}$/);
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.body).not.toHaveProperty('object');

    const wallet = await Wallet.findOne({ owner_type: 'customer', owner_id: res.body.id }).lean();
    expect(wallet?._id).toMatch(/^wall_/);
    const events = await Event.find({ account_id: a.account_id }).sort({ timestamp: 1 }).lean();
    const names = events.map((e) => e.event);
    expect(names).toEqual(expect.arrayContaining(['wallet.created', 'customer.created']));
    const created = events.find((e) => e.event === 'customer.created')!;
    expect(created.payload).toMatchObject({ id: res.body.id, object: 'customer', email: 'ada@example.com' });
    expect(created._id).toMatch(/^evt_/);
  });

  it('gets, lists newest first, patches and deletes (cascading the wallet)', async () => {
    const a = await newAccount(api.url);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await a.api.post('/v1/customers', { email: `c${i}@x.io` })).body.id);
    const list = await a.api.get('/v1/customers');
    expect(list.status).toBe(200);
    expect(list.body.customers.map((c: any) => c.id)).toEqual([...ids].reverse());
    expect(list.body.pagination).toEqual({ page: 1, pages: 1, count: 3 });

    expect((await a.api.get(`/v1/customers/${ids[0]}`)).body.email).toBe('c0@x.io');
    const patched = await a.api.patch(`/v1/customers/${ids[0]}`, { email: 'NEW@x.io', last_name: 'Smith' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ email: 'new@x.io', last_name: 'Smith' });
    expect(new Date(patched.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(patched.body.created_at).getTime());

    const del = await a.api.del(`/v1/customers/${ids[0]}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    expect((await a.api.get(`/v1/customers/${ids[0]}`)).status).toBe(404);
    expect(await Wallet.countDocuments({ owner_id: ids[0] })).toBe(0);
    const names = (await Event.find({ account_id: a.account_id, 'payload.id': ids[0] }).lean()).map((e) => e.event);
    expect(names).toEqual(expect.arrayContaining(['customer.created', 'customer.updated', 'customer.deleted']));
  });

  it('refuses a duplicate email within the account and scope, but not across them', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    expect((await a.api.post('/v1/customers', { email: 'dup@x.io' })).status).toBe(201);
    const dup = await a.api.post('/v1/customers', { email: 'DUP@x.io' });
    expect(dup.status).toBe(422);
    expect(dup.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'email' });
    expect(dup.body.errors).toEqual({ email: ['has already been taken'] });
    expect((await a.sandbox.post('/v1/customers', { email: 'dup@x.io' })).status).toBe(201);
    expect((await b.api.post('/v1/customers', { email: 'dup@x.io' })).status).toBe(201);
    // No partial write: the refused create left no wallet behind.
    expect(await Wallet.countDocuments({ account_id: a.account_id, sandbox: null, owner_type: 'customer' })).toBe(1);

    const other = (await a.api.post('/v1/customers', { email: 'other@x.io' })).body.id;
    const clash = await a.api.patch(`/v1/customers/${other}`, { email: 'dup@x.io' });
    expect(clash.status).toBe(422);
    expect(clash.body.errors).toEqual({ email: ['has already been taken'] });
  });

  it('answers the documented errors for bad input', async () => {
    const a = await newAccount(api.url);
    const missing = await a.api.post('/v1/customers', { first_name: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'parameter_missing', param: 'email' });

    const invalid = await a.api.post('/v1/customers', { email: 'not-an-email' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error).toMatchObject({ code: 'parameter_invalid', message: 'Email is invalid', param: 'email' });
    expect(invalid.body.error.timestamp).toBeDefined();
    expect(invalid.body.error.doc_url).toContain('parameter_invalid');

    const blank = await a.api.post('/v1/customers', { email: '   ' });
    expect(blank.status).toBe(422);
    expect(blank.body.errors).toEqual({ email: ["can't be blank"] });

    const wrongType = await a.api.post('/v1/customers', { email: 42 });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.error.param).toBe('email');

    const tooLong = await a.api.post('/v1/customers', { email: `${'a'.repeat(300)}@x.io` });
    expect(tooLong.status).toBe(422);
    const longName = await a.api.post('/v1/customers', { email: 'ok@x.io', first_name: 'n'.repeat(201) });
    expect(longName.status).toBe(422);
    expect(longName.body.error.param).toBe('first_name');

    expect((await a.api.get('/v1/customers')).body.pagination.count).toBe(0);
  });

  it('paginates 25 per page and handles pages past the end and bad pages', async () => {
    const a = await newAccount(api.url);
    await Promise.all(Array.from({ length: 27 }, (_, i) => a.api.post('/v1/customers', { email: `p${i}@x.io` })));
    const p1 = await a.api.get('/v1/customers?page=1');
    const p2 = await a.api.get('/v1/customers?page=2');
    expect(p1.body.customers).toHaveLength(25);
    expect(p2.body.customers).toHaveLength(2);
    expect(p2.body.pagination).toEqual({ page: 2, pages: 2, count: 27 });
    const all = [...p1.body.customers, ...p2.body.customers];
    expect(new Set(all.map((c: any) => c.id)).size).toBe(27);
    const times = all.map((c: any) => c.created_at);
    expect([...times].sort().reverse()).toEqual(times);

    const past = await a.api.get('/v1/customers?page=9');
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ customers: [], pagination: { page: 9, pages: 2, count: 27 } });
    for (const bad of ['0', '-1', 'abc', '1.5']) {
      const r = await a.api.get(`/v1/customers?page=${bad}`);
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'page' });
    }
  });
});
