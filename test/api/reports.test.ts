/**
 * The reports through the real app: they agree with the subscriptions, invoices and crypto
 * transactions created through the API, answer CSV on `Accept: text/csv`, validate their query
 * like every list, and never show another account's or scope's data.
 */
import { useTestDatabase } from '../support/db';
import { Invoice } from '../../src/models/invoice';
import { loadCollectionsSource } from '../../src/services/reports/reportSources';
import { Client, newAccount, startTestApi, TestApi } from '../support/api';
import { BTC_BECH32, ETH_EIP55, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const DAY = 86_400_000;
const now = new Date();
const daysAgo = (n: number) => new Date(now.getTime() - n * DAY);
const day = (d: Date) => d.toISOString().slice(0, 10);
const month = (d: Date) => d.toISOString().slice(0, 7);
const thisMonth = month(now);
const cents = (a: string) => Math.round(Number(a) * 100);

function parseCsv(text: string): string[][] {
  // Our CSV quotes no field in these reports (ids, dates, numbers): a plain split is enough here.
  return text.trim().split('\r\n').map((l) => l.split(','));
}

async function seed(c: Client) {
  const product = (await c.post('/v1/products', { name: 'Plan' })).body;
  const monthly = (await c.post('/v1/prices', { product_id: product.id, amount: 2000, recurring: { interval: 'month', interval_count: 1 } })).body;
  const yearly = (await c.post('/v1/prices', { product_id: product.id, amount: 120000, recurring: { interval: 'year', interval_count: 1 } })).body;
  const { customer } = await customerWithWallet(c, 'finance@x.io');
  const sub = (start: Date, items: object[]) => c.post('/v1/subscriptions', { customer_id: customer.id, proration_behavior: 'none', phases: [{ start_date: start.toISOString(), items }] });
  const a = await sub(daysAgo(70), [{ price_id: monthly.id, quantity: 2 }]);
  const b = await sub(daysAgo(45), [{ price_id: yearly.id }]);
  const gone = await sub(daysAgo(100), [{ price_id: monthly.id, overridden_price_amount: '15.00' }]);
  for (const r of [a, b, gone]) expect(r.status).toBe(201);
  expect((await c.del(`/v1/subscriptions/${gone.body.id}`)).status).toBe(204);
  return { customer, subs: [a.body, b.body], gone: gone.body };
}

describe('GET /v1/reports/mrr', () => {
  it('agrees with the subscriptions: MRR, ARR, movements, and a canceled one churned this month', async () => {
    const acct = await newAccount(api.url);
    await seed(acct.api);
    const res = await acct.api.get('/v1/reports/mrr');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'mrr_report', currency: 'USD', to: thisMonth });
    expect(res.body.months).toHaveLength(12);
    const last = res.body.months[11];
    // 2 x 20.00 monthly + 1200.00 yearly / 12; the 15.00 one was deleted (canceled) this month.
    expect(last).toMatchObject({ month: thisMonth, mrr: '140.00', arr: '1680.00', churned_mrr: '-15.00', churned_subscriptions: 1, active_subscriptions: 2 });
    for (const m of res.body.months) {
      expect(cents(m.starting_mrr) + cents(m.new_mrr) + cents(m.expansion_mrr) + cents(m.contraction_mrr) + cents(m.churned_mrr)).toBe(cents(m.mrr));
    }
    const newTotal = res.body.months.reduce((s: number, m: any) => s + cents(m.new_mrr), 0);
    expect(newTotal).toBe(4000 + 10000 + 1500);

    const csv = await acct.api.get('/v1/reports/mrr?from=' + res.body.from + '&to=' + thisMonth, { Accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename="mrr-/);
    const rows = parseCsv(csv.body);
    expect(rows[0]).toEqual(['month', 'starting_mrr', 'new_mrr', 'expansion_mrr', 'contraction_mrr', 'churned_mrr', 'net_new_mrr', 'mrr', 'arr', 'active_subscriptions', 'new_subscriptions', 'churned_subscriptions']);
    expect(rows).toHaveLength(13);
    expect(rows[12][7]).toBe('140.00');
  });

  it('validates from and to like every query (422 parameter_invalid) and needs a token', async () => {
    const acct = await newAccount(api.url);
    for (const [q, param] of [['from=2027-13', 'from'], ['to=27-01', 'to'], ['from=2027-05&to=2027-01', 'from'], ['from=2000-01&to=2027-01', 'to']]) {
      const r = await acct.api.get(`/v1/reports/mrr?${q}`);
      expect([q, r.status, r.body.error.code, r.body.error.param]).toEqual([q, 422, 'parameter_invalid', param]);
    }
    expect((await acct.api.get('/v1/reports/collections?from=nope')).status).toBe(422);
    expect((await acct.api.get('/v1/reports/receivables?as_of=2027-02-30')).body.error.param).toBe('as_of');
    const anon = await fetch(`${api.url}/v1/reports/mrr`);
    expect(anon.status).toBe(401);
  });
});

describe('GET /v1/reports/receivables', () => {
  it('ages the open invoices by days past due; paid ones are not receivable; CSV lists every invoice', async () => {
    const acct = await newAccount(api.url);
    const { customer } = await customerWithWallet(acct.api, 'ar@x.io');
    const made: Record<string, any> = {};
    for (const [name, ago, amount] of [['current', -5, '10.00'], ['d10', 10, '20.00'], ['d45', 45, '30.00'], ['d75', 75, '40.00'], ['d120', 120, '50.00'], ['paid', 20, '60.00']] as const) {
      made[name] = await invoiceOf(acct.api, customer.id, amount, day(daysAgo(ago)));
    }
    expect((await acct.api.patch(`/v1/invoices/${made.paid.id}`, { status: 'paid' })).status).toBe(200);

    const res = await acct.api.get(`/v1/reports/receivables?as_of=${day(now)}`);
    expect(res.status).toBe(200);
    const byBucket = Object.fromEntries(res.body.buckets.map((b: any) => [b.bucket, b]));
    expect(Object.keys(byBucket)).toEqual(['current', '1_30', '31_60', '61_90', 'over_90']);
    expect(byBucket.current.invoices.map((i: any) => i.id)).toEqual([made.current.id]);
    expect(byBucket['1_30'].invoices.map((i: any) => i.id)).toEqual([made.d10.id]);
    expect(byBucket['31_60'].amount).toBe('30.00');
    expect(byBucket['61_90'].invoices[0]).toMatchObject({ id: made.d75.id, days_past_due: 75, balance: '40.00', customer_id: customer.id });
    expect(byBucket.over_90.count).toBe(1);
    expect(res.body.total).toEqual({ count: 5, amount: '150.00' });
    expect(res.body.overdue).toEqual({ count: 4, amount: '140.00' });

    // Agrees with the invoices the API lists as open.
    const listed = (await acct.api.get('/v1/invoices')).body.invoices.filter((i: any) => i.status === 'pending' || i.status === 'overdue');
    expect(listed.reduce((s: number, i: any) => s + cents(i.total_amount) - cents(i.amount_paid), 0)).toBe(cents(res.body.total.amount));

    // Aged on a day before they were created: none of them existed yet.
    const before = await acct.api.get(`/v1/reports/receivables?as_of=${day(daysAgo(200))}`);
    expect(before.body.total.count).toBe(0);

    const csv = await acct.api.get('/v1/reports/receivables', { Accept: 'text/csv' });
    const rows = parseCsv(csv.body);
    expect(rows[0]).toEqual(['as_of', 'bucket', 'invoice_id', 'customer_id', 'status', 'due_date', 'days_past_due', 'total_amount', 'amount_paid', 'balance']);
    expect(rows.slice(1).map((r) => r[2]).sort()).toEqual([made.current.id, made.d10.id, made.d45.id, made.d75.id, made.d120.id].sort());
  });
});

describe('GET /v1/reports/collections', () => {
  it('shows crypto at its allocated USD value by currency and source, credit per customer, and invoices marked paid', async () => {
    const acct = await newAccount(api.url);
    const { customer, wallet } = await customerWithWallet(acct.api, 'payer@x.io');
    const btc = (await acct.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    const eth = (await acct.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55 })).body;
    await invoiceOf(acct.api, customer.id, '100.00', day(daysAgo(3)));
    const byHand = await invoiceOf(acct.api, customer.id, '25.00', day(daysAgo(1)));
    // 0.003 BTC = 150.00 USD at the fixed rate: pays the 100.00 and the 25.00, leaves 25.00 credit.
    const paid = await acct.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.003', currency_code: 'BTC', transaction_id: txHash() });
    expect(paid.status).toBe(201);
    // 0.01 ETH = 30.00 USD, all credit.
    await acct.api.post('/v1/crypto_transactions', { to_address_id: eth.id, amount: '0.01', currency_code: 'ETH', transaction_id: txHash() });
    const marked = await invoiceOf(acct.api, customer.id, '12.50', day(now));
    expect((await acct.api.patch(`/v1/invoices/${marked.id}`, { status: 'paid' })).status).toBe(200);

    const txs = (await acct.api.get('/v1/crypto_transactions')).body.crypto_transactions;
    expect(txs.every((t: any) => t.unallocated_amount !== null)).toBe(true);
    const res = await acct.api.get(`/v1/reports/collections?from=${thisMonth}&to=${thisMonth}`);
    expect(res.status).toBe(200);
    const rows = res.body.rows;
    expect(rows).toEqual([
      { month: thisMonth, currency: 'BTC', source: 'manual_entry', manual: true, payments: 1, amount: '0.003', usd_value: '150.00', allocated_usd: '125.00', unallocated_usd: '25.00' },
      { month: thisMonth, currency: 'ETH', source: 'manual_entry', manual: true, payments: 1, amount: '0.01', usd_value: '30.00', allocated_usd: '0.00', unallocated_usd: '30.00' },
      { month: thisMonth, currency: 'USD', source: 'invoice_marked_paid', manual: true, payments: 1, amount: '12.50', usd_value: '12.50', allocated_usd: '12.50', unallocated_usd: '0.00' },
    ]);
    // Agrees with the transactions the API shows.
    const usd = txs.reduce((s: number, t: any) => s + cents(t.usd_value), 0);
    expect(rows.filter((r: any) => r.currency !== 'USD').reduce((s: number, r: any) => s + cents(r.usd_value), 0)).toBe(usd);
    expect(res.body.months).toEqual([{ month: thisMonth, usd_value: '192.50', payments: 3 }]);
    expect(res.body.unallocated_credit).toEqual([{ customer_id: customer.id, amount: '55.00', transactions: 2 }]);
    expect((await acct.api.get(`/v1/invoices/${byHand.id}`)).body.status).toBe('paid');

    const csv = parseCsv((await acct.api.get(`/v1/reports/collections?from=${thisMonth}&to=${thisMonth}`, { Accept: 'text/csv' })).body);
    expect(csv[0]).toEqual(['month', 'currency', 'source', 'manual', 'payments', 'amount', 'usd_value', 'allocated_usd', 'unallocated_usd']);
    expect(csv[1]).toEqual([thisMonth, 'BTC', 'manual_entry', 'true', '1', '0.003', '150.00', '125.00', '25.00']);

    // Counted when it was marked paid, not when it was last changed (its due date moved after).
    expect((await acct.api.patch(`/v1/invoices/${marked.id}`, { due_date: day(new Date(now.getTime() + 30 * DAY)) })).status).toBe(200);
    const stored = (await Invoice.findById(marked.id).lean())!;
    expect(stored.updated_at.getTime()).toBeGreaterThan(stored.paid_at!.getTime());
    const source = await loadCollectionsSource({ accountId: acct.account_id, sandbox: null });
    expect(source.markedPaid.map((m) => m.paid_at)).toEqual([stored.paid_at]);
  });
});

describe('report isolation', () => {
  it('shows nothing of account A to account B, or to A\'s sandbox', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    const { customer } = await seed(a.api);
    await invoiceOf(a.api, customer.id, '99.00', day(daysAgo(40)));
    expect((await a.api.get('/v1/reports/receivables')).body.total.count).toBe(1);
    for (const c of [b.api, a.sandbox, b.sandbox]) {
      const mrr = await c.get('/v1/reports/mrr');
      expect(mrr.body.months.every((m: any) => m.mrr === '0.00' && m.churned_mrr === '0.00')).toBe(true);
      expect((await c.get('/v1/reports/receivables')).body.total).toEqual({ count: 0, amount: '0.00' });
      const col = (await c.get('/v1/reports/collections')).body;
      expect([col.rows, col.unallocated_credit]).toEqual([[], []]);
    }
  });
});
