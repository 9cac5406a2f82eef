import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { Invoice } from '../../src/models/invoice';
import { Event } from '../../src/models/event';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

async function withProduct() {
  const a = await newAccount(api.url);
  const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
  return { a, product };
}

describe('prices', () => {
  it('creates one-time and recurring prices in cents', async () => {
    const { a, product } = await withProduct();
    const once = await a.api.post('/v1/prices', { product_id: product.id, amount: 1999 });
    expect(once.status).toBe(201);
    expect(once.body).toMatchObject({ amount: 1999, product_id: product.id, active: true, recurring: null });
    expect(once.body.id).toMatch(/^price_/);
    for (const [interval, interval_count] of [['day', 1], ['week', 2], ['month', 3], ['year', 1]] as const) {
      const r = await a.api.post('/v1/prices', { product_id: product.id, amount: 0, recurring: { interval, interval_count } });
      expect(r.status).toBe(201);
      expect(r.body.recurring).toEqual({ interval, interval_count });
    }
    // Quick-start extras are accepted and ignored.
    const qs = await a.api.post('/v1/prices', { product_id: product.id, amount: 100, currency: 'usd', price_type: 'one_time' });
    expect(qs.status).toBe(201);
  });

  it('enforces amount and recurring rules with field errors', async () => {
    const { a, product } = await withProduct();
    const neg = await a.api.post('/v1/prices', { product_id: product.id, amount: -1 });
    expect(neg.status).toBe(422);
    expect(neg.body.errors).toEqual({ amount: ['must be greater than or equal to 0'] });
    const missingAmount = await a.api.post('/v1/prices', { product_id: product.id });
    expect(missingAmount.status).toBe(400);
    expect(missingAmount.body.error.param).toBe('amount');
    expect((await a.api.post('/v1/prices', { product_id: product.id, amount: 9.5 })).status).toBe(422);
    expect((await a.api.post('/v1/prices', { product_id: product.id, amount: '100' })).status).toBe(422);

    const noInterval = await a.api.post('/v1/prices', { product_id: product.id, amount: 1, recurring: { interval_count: 1 } });
    expect(noInterval.status).toBe(422);
    expect(noInterval.body.errors).toEqual({ interval: ['is required for recurring prices'] });
    const boolRecurring = await a.api.post('/v1/prices', { product_id: product.id, amount: 1, recurring: true });
    expect(boolRecurring.body.errors).toHaveProperty('interval');
    const badInterval = await a.api.post('/v1/prices', { product_id: product.id, amount: 1, recurring: { interval: 'fortnight', interval_count: 1 } });
    expect(badInterval.body.errors.interval[0]).toContain('day, week, month, year');
    for (const count of [0, -2, 1.5, '2', undefined]) {
      const r = await a.api.post('/v1/prices', { product_id: product.id, amount: 1, recurring: { interval: 'month', interval_count: count } });
      expect(r.status).toBe(422);
      expect(Object.keys(r.body.errors)).toEqual(['interval_count']);
    }
    expect((await a.api.get('/v1/prices')).body.pagination.count).toBe(0);
  });

  it('needs a product of the same account and scope', async () => {
    const { a, product } = await withProduct();
    const b = await newAccount(api.url);
    const r = await b.api.post('/v1/prices', { product_id: product.id, amount: 1 });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 'resource_not_found', param: 'product_id' });
    expect((await a.sandbox.post('/v1/prices', { product_id: product.id, amount: 1 })).status).toBe(404);
    expect((await a.api.post('/v1/prices', { amount: 1 })).body.error.param).toBe('product_id');
  });

  it('only lets `active` change after creation', async () => {
    const { a, product } = await withProduct();
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 500 })).body;
    const off = await a.api.patch(`/v1/prices/${price.id}`, { active: false });
    expect(off.status).toBe(200);
    expect(off.body.active).toBe(false);
    const amount = await a.api.patch(`/v1/prices/${price.id}`, { amount: 1 });
    expect(amount.status).toBe(422);
    expect(amount.body.error.param).toBe('amount');
    expect((await a.api.patch(`/v1/prices/${price.id}`, { active: 'no' })).status).toBe(422);
    expect((await a.api.get(`/v1/prices/${price.id}`)).body).toMatchObject({ amount: 500, active: false });
    expect((await a.api.del(`/v1/prices/${price.id}`)).status).toBe(204);
    expect((await a.api.get(`/v1/prices/${price.id}`)).status).toBe(404);
  });

  it('deleting a price whose lines a payment already covered settles the invoice as paid; nothing is ever due below zero', async () => {
    const { a, product } = await withProduct();
    const { customer, wallet } = await customerWithWallet(a.api, 'covered@example.com');
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    const big = (await a.api.post('/v1/prices', { product_id: product.id, amount: 6000 })).body;
    const small = (await a.api.post('/v1/prices', { product_id: product.id, amount: 4000 })).body;
    const covered = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2027-01-01', line_items: [{ price_id: big.id }, { price_id: small.id }] })).body;
    const other = await invoiceOf(a.api, customer.id, '50.00', '2027-02-01');
    // 0.0014 BTC at the fixed 50,000.00 is 70.00, applied to the oldest due date first.
    const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.0014', currency_code: 'BTC', transaction_id: txHash() });
    expect(tx.status).toBe(201);
    expect((await a.api.get(`/v1/invoices/${covered.id}`)).body).toMatchObject({ status: 'pending', total_amount: '100.00', amount_paid: '70.00' });

    expect((await a.api.del(`/v1/prices/${big.id}`)).status).toBe(204);
    const after = (await a.api.get(`/v1/invoices/${covered.id}`)).body;
    expect(after).toMatchObject({ status: 'paid', total_amount: '40.00', amount_paid: '70.00' });
    expect(after.line_items.map((l: { price_id: string }) => l.price_id)).toEqual([small.id]);
    expect(await Event.countDocuments({ account_id: a.account_id, event: 'invoice.paid', 'payload.id': covered.id })).toBe(1);
    expect((await a.api.get(`/v1/invoices/${other.id}`)).body).toMatchObject({ status: 'pending', amount_paid: '0.00' });

    // The pay page asks for the other invoice in full; an overpaid invoice (here one left open by
    // an earlier version) counts as nothing due, never as a negative amount that lowers the rest.
    await Invoice.updateOne({ _id: covered.id }, { $set: { status: 'pending' } });
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 1 })).body;
    const secret = String(link.link).split('/pay/')[1];
    const page = (await client(api.url).get(`/v1/public/payment_claim_links/${secret}`)).body;
    expect(page.invoices.map((i: { id: string; amount_due: string }) => [i.id, i.amount_due])).toEqual([[covered.id, '0.00'], [other.id, '50.00']]);
    expect(page.amount_due).toBe('50.00');
  });
});
