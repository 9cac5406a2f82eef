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
  const customer = (await a.api.post('/v1/customers', { email: 'bill@x.io' })).body;
  const product = (await a.api.post('/v1/products', { name: 'Widget' })).body;
  const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 1999 })).body;
  const cheap = (await a.api.post('/v1/prices', { product_id: product.id, amount: 5 })).body;
  return { a, customer, product, price, cheap };
}

describe('invoices', () => {
  it('builds line items from prices, with overrides, to the cent', async () => {
    const { a, customer, product, price, cheap } = await setup();
    const res = await a.api.post('/v1/invoices', {
      customer_id: customer.id,
      due_date: '2026-12-31',
      line_items: [{ price_id: price.id, quantity: 3 }, { price_id: cheap.id }, { price_id: price.id, amount: '0.10', quantity: 7 }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ customer_id: customer.id, subscription_id: null, status: 'pending', due_date: '2026-12-31', total_amount: '60.72' });
    expect(res.body.id).toMatch(/^inv_/);
    expect(res.body.line_items).toEqual([
      expect.objectContaining({ price_id: price.id, product_id: product.id, product_name: 'Widget', quantity: 3, unit_amount: '19.99', amount: '59.97' }),
      expect.objectContaining({ price_id: cheap.id, quantity: 1, unit_amount: '0.05', amount: '0.05' }),
      expect.objectContaining({ price_id: price.id, quantity: 7, unit_amount: '0.10', amount: '0.70' }),
    ]);
    for (const li of res.body.line_items) expect(li.id).toMatch(/^li_/);
    expect((await a.api.get(`/v1/invoices/${res.body.id}`)).body).toEqual(res.body);
    const ev = await Event.findOne({ event: 'invoice.created', 'payload.id': res.body.id }).lean();
    expect(ev?.payload).toMatchObject({ id: res.body.id, object: 'invoice', customer_id: customer.id, status: 'pending', total_amount: '60.72' });
  });

  it('answers the spec errors', async () => {
    const { a, customer, price } = await setup();
    const b = await newAccount(api.url);
    const missingDue = await a.api.post('/v1/invoices', { customer_id: customer.id });
    expect(missingDue.status).toBe(400);
    expect(missingDue.body.error.param).toBe('due_date');
    const badDue = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-02-30' });
    expect(badDue.status).toBe(422);
    expect(badDue.body.error.param).toBe('due_date');
    const noCustomer = await a.api.post('/v1/invoices', { customer_id: 'cust_nope', due_date: '2026-12-01' });
    expect(noCustomer.status).toBe(404);
    expect(noCustomer.body.error).toMatchObject({ code: 'resource_not_found', message: 'Customer not found', param: 'customer_id' });
    const noPrice = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', line_items: [{ price_id: 'price_missing' }] });
    expect(noPrice.status).toBe(404);
    expect(noPrice.body.error).toMatchObject({ message: 'Price not found: price_missing', param: 'line_items[][price_id]' });
    const foreignPrice = await b.api.post('/v1/customers', { email: 'b@x.io' }).then((c) =>
      b.api.post('/v1/invoices', { customer_id: c.body.id, due_date: '2026-12-01', line_items: [{ price_id: price.id }] }),
    );
    expect(foreignPrice.status).toBe(404);
    const missingPriceId = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', line_items: [{ quantity: 2 }] });
    expect(missingPriceId.status).toBe(400);
    expect(missingPriceId.body.error.param).toBe('line_items[][price_id]');
    const badQty = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', line_items: [{ price_id: price.id, quantity: 0 }] });
    expect(badQty.status).toBe(422);
    expect(badQty.body.error.param).toBe('line_items[][quantity]');
    const badAmount = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', line_items: [{ price_id: price.id, amount: '1.234' }] });
    expect(badAmount.status).toBe(422);
    expect(badAmount.body.error.param).toBe('line_items[][amount]');
    const badStatus = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', status: 'draft' });
    expect(badStatus.status).toBe(422);
    expect((await a.api.get('/v1/invoices')).body.pagination.count).toBe(0);
  });

  it('changes status and due date by PATCH, emitting updated and paid; canceled is final', async () => {
    const { a, customer, price } = await setup();
    const inv = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', line_items: [{ price_id: price.id }] })).body;
    const moved = await a.api.patch(`/v1/invoices/${inv.id}`, { due_date: '2027-01-15' });
    expect(moved.body.due_date).toBe('2027-01-15');
    const paid = await a.api.patch(`/v1/invoices/${inv.id}`, { status: 'paid' });
    expect(paid.body.status).toBe('paid');
    const names = (await Event.find({ 'payload.id': inv.id }).sort({ timestamp: 1 }).lean()).map((e) => e.event);
    expect(names).toEqual(['invoice.created', 'invoice.updated', 'invoice.updated', 'invoice.paid']);
    expect((await a.api.patch(`/v1/invoices/${inv.id}`, { status: 'canceled' })).body.status).toBe('canceled');
    const reopen = await a.api.patch(`/v1/invoices/${inv.id}`, { status: 'pending' });
    expect(reopen.status).toBe(422);
    expect(reopen.body.error.param).toBe('status');
    expect((await a.api.patch(`/v1/invoices/${inv.id}`, { status: 'nope' })).status).toBe(422);
  });

  it('creates with a given status, lists with filters, deletes; other accounts and scope see nothing', async () => {
    const { a, customer } = await setup();
    const b = await newAccount(api.url);
    const one = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', status: 'paid' })).body;
    const two = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-02' })).body;
    expect(one.status).toBe('paid');
    expect(one.total_amount).toBe('0.00');
    expect((await a.api.get('/v1/invoices')).body.invoices.map((i: any) => i.id)).toEqual([two.id, one.id]);
    expect((await a.api.get('/v1/invoices?status=paid')).body.invoices.map((i: any) => i.id)).toEqual([one.id]);
    expect((await a.api.get(`/v1/invoices?customer_id=${customer.id}`)).body.pagination.count).toBe(2);
    for (const other of [b.api, a.sandbox]) {
      expect((await other.get(`/v1/invoices/${one.id}`)).status).toBe(404);
      expect((await other.patch(`/v1/invoices/${one.id}`, { status: 'pending' })).status).toBe(404);
      expect((await other.del(`/v1/invoices/${one.id}`)).status).toBe(404);
      expect((await other.get('/v1/invoices')).body.invoices).toEqual([]);
      expect((await other.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01' })).status).toBe(404);
    }
    expect((await a.api.del(`/v1/invoices/${one.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/invoices/${one.id}`)).status).toBe(404);
  });

  it('deleting a price removes its line items and recomputes totals', async () => {
    const { a, customer, price, cheap } = await setup();
    const inv = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', line_items: [{ price_id: price.id }, { price_id: cheap.id, quantity: 2 }] })).body;
    expect(inv.total_amount).toBe('20.09');
    expect((await a.api.del(`/v1/prices/${price.id}`)).status).toBe(204);
    const after = (await a.api.get(`/v1/invoices/${inv.id}`)).body;
    expect(after.line_items.map((l: any) => l.price_id)).toEqual([cheap.id]);
    expect(after.total_amount).toBe('0.10');
  });

  it('refuses an inactive price', async () => {
    const { a, customer, price } = await setup();
    await a.api.patch(`/v1/prices/${price.id}`, { active: false });
    const r = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2026-12-01', line_items: [{ price_id: price.id }] });
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('line_items[][price_id]');
  });
});
