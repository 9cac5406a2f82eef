import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { Invoice, paidMonthKey } from '../../src/models/invoice';
import { Event } from '../../src/models/event';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';
import { releaseInvoiceCredit } from '../../src/services/billing/invoiceChanges';
import { allocateManually } from '../../src/services/crypto/allocation';
import { testDependencies } from '../support/dependencies';
import { RACE_ROUNDS, raceOffset } from '../support/race';

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

    const removedFrom = Date.now();
    expect((await a.api.del(`/v1/prices/${big.id}`)).status).toBe(204);
    const removedBy = Date.now();
    const after = (await a.api.get(`/v1/invoices/${covered.id}`)).body;
    // What was paid beyond the new total went back to the transaction as credit.
    expect(after).toMatchObject({ status: 'paid', total_amount: '40.00', amount_paid: '40.00' });
    // Paid by the removal: when, for the claim links that list what was paid since them.
    const stored = (await Invoice.findById(covered.id).lean())!;
    expect(stored.paid_at!.getTime()).toBeGreaterThanOrEqual(removedFrom);
    expect(stored.paid_at!.getTime()).toBeLessThanOrEqual(removedBy);
    expect(stored.paid_month_key).toBe(paidMonthKey(customer.id, stored.paid_at!));
    expect((await a.api.get(`/v1/crypto_transactions/${tx.body.id}`)).body).toMatchObject({ usd_value: '70.00', unallocated_amount: '30.00' });
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

  it('carries what a paid invoice was paid beyond its new total to the transaction as credit, once, usable by a manual allocation', async () => {
    const deps = testDependencies();
    const { a, product } = await withProduct();
    const { customer, wallet } = await customerWithWallet(a.api, 'surplus@example.com');
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    const big = (await a.api.post('/v1/prices', { product_id: product.id, amount: 6000 })).body;
    const small = (await a.api.post('/v1/prices', { product_id: product.id, amount: 4000 })).body;
    const inv = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2027-01-01', line_items: [{ price_id: big.id }, { price_id: small.id }] })).body;
    // 0.002 BTC at the fixed 50,000.00 is 100.00: the invoice in full.
    const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() })).body;
    expect((await a.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    const other = await invoiceOf(a.api, customer.id, '50.00', '2027-02-01');

    expect((await a.api.del(`/v1/prices/${big.id}`)).status).toBe(204);
    const expectReleased = async () => {
      expect((await a.api.get(`/v1/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', total_amount: '40.00', amount_paid: '40.00' });
      const t = (await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body;
      expect(t).toMatchObject({ usd_value: '100.00', unallocated_amount: '60.00' });
      expect(t.allocations.map((x: { invoice_id: string; amount_applied: string }) => [x.invoice_id, x.amount_applied])).toEqual([[inv.id, '40.00']]);
      expect(await Invoice.countDocuments({ _id: inv.id, credit_release_due: true })).toBe(0);
      expect(await Event.countDocuments({ account_id: a.account_id, event: 'crypto_transaction.allocated', 'payload.id': tx.id, 'payload.unallocated_amount': '60.00' })).toBe(1);
    };
    await expectReleased();
    // Applied + unallocated = usd_value, in the collections report too.
    const month = new Date().toISOString().slice(0, 7);
    const report = (await a.api.get(`/v1/reports/collections?from=${month}&to=${month}`)).body;
    expect(report.rows).toEqual([expect.objectContaining({ currency: 'BTC', usd_value: '100.00', allocated_usd: '40.00', unallocated_usd: '60.00' })]);
    expect(report.unallocated_credit).toEqual([{ customer_id: customer.id, amount: '60.00', transactions: 1 }]);

    // A replay finds nothing to do.
    expect(await releaseInvoiceCredit(deps, inv.id)).toBe('nothing_due');
    await expectReleased();
    // A crash after the invoice's write, before the transaction's: the release (the sweeper's) does it once.
    const released = (await CryptoTransaction.findById(tx.id).lean())!;
    await CryptoTransaction.updateOne({ _id: tx.id }, { $set: { unallocated_amount: '0.00', allocations: released.allocations.map((x) => ({ ...x, amount_applied: '100.00', released_amount: undefined })) } });
    await Invoice.updateOne({ _id: inv.id }, { $set: { credit_release_due: true } });
    // Waits while the transaction's allocation has not finished.
    await CryptoTransaction.updateOne({ _id: tx.id }, { $set: { allocation_due: true } });
    expect(await releaseInvoiceCredit(deps, inv.id)).toBe('waiting');
    expect((await CryptoTransaction.findById(tx.id).lean())!.unallocated_amount).toBe('0.00');
    await CryptoTransaction.updateOne({ _id: tx.id }, { $set: { allocation_due: false } });
    expect(await releaseInvoiceCredit(deps, inv.id)).toBe('released');
    expect(await releaseInvoiceCredit(deps, inv.id)).toBe('nothing_due');
    await expectReleased();
    // A crash after the transaction's write, before the intent was cleared: nothing more is credited.
    await Invoice.updateOne({ _id: inv.id }, { $set: { credit_release_due: true } });
    expect(await releaseInvoiceCredit(deps, inv.id)).toBe('released');
    await expectReleased();

    // The pay page still asks the other invoice in full; the credit then pays it by hand.
    const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 1 })).body;
    const page = (await client(api.url).get(`/v1/public/payment_claim_links/${String(link.link).split('/pay/')[1]}`)).body;
    expect(page.amount_due).toBe('50.00');
    const manual = await a.api.post(`/v1/crypto_transactions/${tx.id}/allocations`, { invoice_id: other.id });
    expect(manual.status).toBe(201);
    expect(manual.body).toMatchObject({ unallocated_amount: '10.00' });
    expect(manual.body.allocations.map((x: { invoice_id: string; amount_applied: string }) => [x.invoice_id, x.amount_applied])).toEqual([[inv.id, '40.00'], [other.id, '50.00']]);
    expect((await a.api.get(`/v1/invoices/${other.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '50.00' });
  });

  it('a release and a manual allocation of the same transaction at once neither lose nor double credit', async () => {
    const cents = (x: string) => Math.round(Number(x) * 100);
    const deps = testDependencies();
    // Half the usual rounds (each offset twice): every round signs up an account (one address per scope).
    for (let round = 0; round < RACE_ROUNDS / 2; round++) {
      const { a, product } = await withProduct();
      const { customer, wallet } = await customerWithWallet(a.api, `race${round}@example.com`);
      const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
      const big = (await a.api.post('/v1/prices', { product_id: product.id, amount: 6000 })).body;
      const small = (await a.api.post('/v1/prices', { product_id: product.id, amount: 4000 })).body;
      const inv = (await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2027-01-01', line_items: [{ price_id: big.id }, { price_id: small.id }] })).body;
      // 0.003 BTC is 150.00: the invoice's 100.00, and 50.00 credit.
      const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.003', currency_code: 'BTC', transaction_id: txHash() })).body;
      const other = await invoiceOf(a.api, customer.id, '30.00', '2027-02-01');
      const [del, manual] = await Promise.all([
        a.api.del(`/v1/prices/${big.id}`),
        raceOffset(round).then(() => a.api.post(`/v1/crypto_transactions/${tx.id}/allocations`, { invoice_id: other.id, amount_applied: '30.00' })),
      ]);
      expect(del.status).toBe(204);
      expect([201, 409]).toContain(manual.status);
      // What the request could not finish (the transaction held throughout), the sweeper does.
      await releaseInvoiceCredit(deps, inv.id);
      const t = (await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body;
      const applied = t.allocations.reduce((sum: number, x: { amount_applied: string }) => sum + cents(x.amount_applied), 0);
      expect({ round, total: applied + cents(t.unallocated_amount) }).toEqual({ round, total: 15000 });
      expect(t.unallocated_amount).toBe(manual.status === 201 ? '80.00' : '110.00');
      expect((await a.api.get(`/v1/invoices/${inv.id}`)).body.amount_paid).toBe('40.00');
      expect((await a.api.get(`/v1/invoices/${other.id}`)).body.amount_paid).toBe(manual.status === 201 ? '30.00' : '0.00');
    }
  }, 180_000);

  it('a manual allocation planned from the transaction as it was before a release keeps the released credit', async () => {
    const deps = testDependencies();
    const { a, product } = await withProduct();
    const { customer, wallet } = await customerWithWallet(a.api, 'stale@example.com');
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    const big = (await a.api.post('/v1/prices', { product_id: product.id, amount: 6000 })).body;
    const small = (await a.api.post('/v1/prices', { product_id: product.id, amount: 4000 })).body;
    await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2027-01-01', line_items: [{ price_id: big.id }, { price_id: small.id }] });
    // 150.00: the invoice's 100.00, and 50.00 credit.
    const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.003', currency_code: 'BTC', transaction_id: txHash() })).body;
    const other = await invoiceOf(a.api, customer.id, '30.00', '2027-02-01');
    // Read by the request before the release landed (its slot was free again by the time it took it).
    const stale = (await CryptoTransaction.findById(tx.id).lean())!;
    expect(stale.unallocated_amount).toBe('50.00');
    expect((await a.api.del(`/v1/prices/${big.id}`)).status).toBe(204);
    expect((await CryptoTransaction.findById(tx.id).lean())!.unallocated_amount).toBe('110.00');
    const done = await allocateManually(deps, stale, async () => (await Invoice.findById(other.id).lean())!, '30.00');
    expect(done.unallocated_amount).toBe('80.00');
    expect((await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body.unallocated_amount).toBe('80.00');
  });
});
