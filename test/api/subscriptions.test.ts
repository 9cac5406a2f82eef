import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { Event } from '../../src/models/event';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

async function setup() {
  const a = await newAccount(api.url);
  const customer = (await a.api.post('/v1/customers', { email: 'sub@x.io' })).body;
  const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
  const monthly = (await a.api.post('/v1/prices', { product_id: product.id, amount: 1000, recurring: { interval: 'month', interval_count: 1 } })).body;
  const yearly = (await a.api.post('/v1/prices', { product_id: product.id, amount: 10000, recurring: { interval: 'year', interval_count: 1 } })).body;
  const setupFee = (await a.api.post('/v1/prices', { product_id: product.id, amount: 500 })).body;
  return { a, customer, product, monthly, yearly, setupFee };
}

describe('subscriptions API', () => {
  it('creates a multi-phase subscription with items, effective prices and events', async () => {
    const { a, customer, monthly, yearly, setupFee } = await setup();
    const res = await a.api.post('/v1/subscriptions', {
      customer_id: customer.id,
      phases: [
        { start_date: '2030-01-01', end_date: '2030-03-01', items: [{ price_id: monthly.id, quantity: 2, overridden_price_amount: '7.50' }, { price_id: setupFee.id }] },
        { start_date: '2030-03-01', items: [{ price_id: yearly.id }] },
      ],
    });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(s.id).toMatch(/^sub_/);
    expect(s).toMatchObject({
      customer_id: customer.id,
      status: 'scheduled',
      proration_behavior: 'create_prorations',
      start_date: '2030-01-01T00:00:00.000Z',
      billing_cycle_anchor: '2030-01-01T00:00:00.000Z',
      end_date: null,
      next_billing_date: '2030-01-01T00:00:00.000Z',
      total_amount: '15.00',
    });
    expect(s.phases).toHaveLength(2);
    expect(s.phases[0]).toMatchObject({ start_date: '2030-01-01T00:00:00.000Z', end_date: '2030-03-01T00:00:00.000Z', is_active: false });
    expect(s.phases[0].id).toMatch(/^sub_phase_/);
    expect(s.phases[0].items[0]).toMatchObject({
      price_id: monthly.id, quantity: 2, unit_amount: '10.00', overridden_price_amount: '7.50', effective_price: '7.50', recurring: true, interval: 'month', interval_count: 1,
    });
    expect(s.phases[0].items[1]).toMatchObject({ price_id: setupFee.id, quantity: 1, effective_price: '5.00', recurring: false, interval: null, overridden_price_amount: null });
    expect((await a.api.get(`/v1/subscriptions/${s.id}`)).body).toEqual(s);
    const names = (await Event.find({ account_id: a.account_id, $or: [{ 'payload.id': s.id }, { 'payload.subscription_id': s.id }] }).lean()).map((e) => e.event);
    expect(names.sort()).toEqual(['subscription.created', 'subscription_phase.created', 'subscription_phase.created']);
    const phaseEvent = await Event.findOne({ event: 'subscription_phase.created', 'payload.id': s.phases[0].id }).lean();
    expect(phaseEvent!.payload).toMatchObject({ object: 'subscription_phase', subscription_id: s.id, items: [{ id: 1, price_id: monthly.id, quantity: 2, overridden_price_amount: '7.50' }, { id: 2, price_id: setupFee.id }] });
  });

  it('enforces the phase rules as 422 errors naming the rule', async () => {
    const { a, customer, monthly, yearly } = await setup();
    const post = (phases: unknown) => a.api.post('/v1/subscriptions', { customer_id: customer.id, phases });
    const none = await post([]);
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual({ subscription_phases: ['must have at least one phase'] });
    const cases: Array<[unknown, string]> = [
      [[{ start_date: '2030-01-01', items: [] }], 'phase_has_items'],
      [[{ start_date: '2030-01-01', items: [{ price_id: monthly.id }, { price_id: yearly.id }] }], 'same_interval'],
      [[{ start_date: '2030-01-01', end_date: '2030-02-01', items: [{ price_id: monthly.id }] }, { start_date: '2030-01-15', items: [{ price_id: monthly.id }] }], 'no_overlap'],
      [[{ start_date: '2030-01-01', end_date: '2030-02-01', items: [{ price_id: monthly.id }] }, { start_date: '2030-02-15', items: [{ price_id: monthly.id }] }], 'no_gaps'],
      [[{ start_date: '2030-01-01', items: [{ price_id: monthly.id }] }, { start_date: '2030-02-15', items: [{ price_id: monthly.id }] }], 'one_active'],
    ];
    for (const [phases, rule] of cases) {
      const r = await post(phases);
      expect([rule, r.status]).toEqual([rule, 422]);
      expect(r.body.error.code).toBe('parameter_invalid');
      expect(r.body.error.message).toContain(rule);
      expect(r.body.errors.subscription_phases).toHaveLength(1);
    }
    expect((await post([{ start_date: 'soon', items: [{ price_id: monthly.id }] }])).body.error.param).toBe('phases[][start_date]');
    expect((await post([{ items: [{ price_id: monthly.id }] }])).body.error.param).toBe('phases[][start_date]');
    const missingPrice = await post([{ start_date: '2030-01-01', items: [{ price_id: 'price_nope' }] }]);
    expect(missingPrice.status).toBe(404);
    expect(missingPrice.body.error).toMatchObject({ message: 'Price not found: price_nope', param: 'phases[][items][][price_id]' });
    const noCustomer = await a.api.post('/v1/subscriptions', { customer_id: 'cust_x', phases: [{ start_date: '2030-01-01', items: [{ price_id: monthly.id }] }] });
    expect(noCustomer.status).toBe(404);
    expect(noCustomer.body.error).toMatchObject({ message: 'Customer not found', param: 'customer_id' });
    expect((await a.api.post('/v1/subscriptions', { customer_id: customer.id })).status).toBe(400);
    expect((await a.api.post('/v1/subscriptions', { customer_id: customer.id, proration_behavior: 'sometimes', phases: [] })).status).toBe(422);
    expect((await a.api.get('/v1/subscriptions')).body.pagination.count).toBe(0);
  });

  // Hardening: a phase in the year 1000 once took seconds per request and crashed the worker.
  it('refuses dates outside the window (a year back, a century ahead) and intervals over three years', async () => {
    const { a, customer, monthly, product } = await setup();
    const daily = (await a.api.post('/v1/prices', { product_id: product.id, amount: 100, recurring: { interval: 'day', interval_count: 1 } })).body;
    const post = (body: Record<string, unknown>) => a.api.post('/v1/subscriptions', { customer_id: customer.id, ...body });
    const ancient = await post({ phases: [{ start_date: '1000-01-01', items: [{ price_id: daily.id }] }] });
    expect(ancient.status).toBe(422);
    expect(ancient.body.error).toMatchObject({ code: 'parameter_invalid', param: 'phases[][start_date]' });
    const twoYearsAgo = new Date(Date.now() - 2 * 366 * 86_400_000).toISOString().slice(0, 10);
    expect((await post({ phases: [{ start_date: twoYearsAgo, items: [{ price_id: daily.id }] }] })).body.error.param).toBe('phases[][start_date]');
    expect((await post({ phases: [{ start_date: '2030-01-01', end_date: '9999-01-01', items: [{ price_id: monthly.id }] }] })).body.error.param).toBe('phases[][end_date]');
    expect((await post({ billing_cycle_anchor: '0100-01-01', phases: [{ start_date: '2030-01-01', items: [{ price_id: monthly.id }] }] })).body.error.param).toBe('billing_cycle_anchor');
    expect((await a.api.get('/v1/subscriptions')).body.pagination.count).toBe(0);

    const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
    const recent = await post({ phases: [{ start_date: monthAgo, items: [{ price_id: daily.id }] }] });
    expect(recent.status).toBe(201);
    const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1));
    expect(recent.body.next_billing_date).toBe(tomorrow.toISOString());
    const patched = await a.api.patch(`/v1/subscriptions/${recent.body.id}`, { billing_cycle_anchor: '3000-01-01' });
    expect([patched.status, patched.body.error.param]).toEqual([422, 'billing_cycle_anchor']);

    const long = await a.api.post('/v1/prices', { product_id: product.id, amount: 100, recurring: { interval: 'year', interval_count: 4 } });
    expect([long.status, long.body.errors]).toEqual([422, { interval_count: ['must be at most 3 for interval year (three years)'] }]);
    expect((await a.api.post('/v1/prices', { product_id: product.id, amount: 100, recurring: { interval: 'month', interval_count: 36 } })).status).toBe(201);
  });

  it('patches only proration_behavior and billing_cycle_anchor; deletes with events; isolated per account and scope', async () => {
    const { a, customer, monthly } = await setup();
    const b = await newAccount(api.url);
    const s = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: '2030-01-01', items: [{ price_id: monthly.id }] }] })).body;
    const patched = await a.api.patch(`/v1/subscriptions/${s.id}`, { proration_behavior: 'none', billing_cycle_anchor: '2030-01-15T00:00:00Z' });
    expect(patched.body).toMatchObject({ proration_behavior: 'none', billing_cycle_anchor: '2030-01-15T00:00:00.000Z', next_billing_date: '2030-01-15T00:00:00.000Z' });
    expect((await a.api.patch(`/v1/subscriptions/${s.id}`, { phases: [] })).status).toBe(422);
    expect((await a.api.patch(`/v1/subscriptions/${s.id}`, { proration_behavior: 'x' })).status).toBe(422);
    for (const other of [b.api, a.sandbox]) {
      expect((await other.get(`/v1/subscriptions/${s.id}`)).status).toBe(404);
      expect((await other.get(`/v1/subscriptions/${s.id}/timeline`)).status).toBe(404);
      expect((await other.patch(`/v1/subscriptions/${s.id}`, { proration_behavior: 'none' })).status).toBe(404);
      expect((await other.del(`/v1/subscriptions/${s.id}`)).status).toBe(404);
      expect((await other.get('/v1/subscriptions')).body.subscriptions).toEqual([]);
    }
    expect((await a.api.get('/v1/subscriptions')).body.subscriptions.map((x: any) => x.id)).toEqual([s.id]);
    expect((await a.api.del(`/v1/subscriptions/${s.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/subscriptions/${s.id}`)).status).toBe(404);
    const names = (await Event.find({ $or: [{ 'payload.id': s.id }, { 'payload.subscription_id': s.id }] }).lean()).map((e) => e.event);
    expect(names).toEqual(expect.arrayContaining(['subscription.canceled', 'subscription_phase.deleted']));
  });

  it('deleting a price deletes the subscriptions that use it', async () => {
    const { a, customer, monthly } = await setup();
    const s = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: '2030-01-01', items: [{ price_id: monthly.id }] }] })).body;
    expect((await a.api.del(`/v1/prices/${monthly.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/subscriptions/${s.id}`)).status).toBe(404);
  });
});
