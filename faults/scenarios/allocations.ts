/**
 * Scenario 3: `kill -9` the worker, then the API, during N manual transactions allocated across
 * C customers (each request retried with its Idempotency-Key until it lands). No transaction is
 * recorded or allocated twice, no invoice is paid beyond the slippage rule, and every
 * transaction is fully allocated or kept as credit. Each invoice's `amount_paid` is what its
 * entries applied and its `status` what that amount makes it; each customer's credit (the API's
 * collections report) is what it paid in less what its invoices took. The worker must die with
 * allocations pending, or the scenario fails.
 */
import { randomBytes } from 'node:crypto';
import { bech32 } from '@scure/base';
import Decimal from 'decimal.js';
import { CryptoTransaction, CryptoTransactionDoc } from '../../src/models/cryptoTransaction';
import { Invoice, InvoiceDoc, OPEN_INVOICE_STATUSES } from '../../src/models/invoice';
import { cryptoAllocationsOf } from '../../src/services/billing/invoiceWrites';
import { ApiClient, pool } from '../client';
import { ScenarioContext, ScenarioResult, seconds, startScenarioApp } from '../scenario';
import { sleep, waitUntil } from '../stack';

const SLIPPAGE = '0.005';

export function randomBtcAddress(): string {
  return bech32.encode('bc', [0, ...bech32.toWords(randomBytes(20))]);
}

export async function allocationsUnderKills(ctx: ScenarioContext, opts: { transactions: number; customers: number }): Promise<ScenarioResult> {
  const app = await startScenarioApp(ctx, 'allocations', { SLIPPAGE_TOLERANCE: SLIPPAGE });
  try {
    const { client } = app;
    const product = (await client.post('/v1/products', { name: 'Fault goods' })).body;
    const price = (await client.post('/v1/prices', { product_id: product.id, amount: 10000 })).body;
    const customers: { id: string; addressId: string }[] = [];
    await pool(Array.from({ length: opts.customers }, (_, i) => i), 8, async (i) => {
      const c = (await client.post('/v1/customers', { email: `alloc${i}@faults.example.com` })).body;
      const wallet = await findWallet(client, c.id);
      const addr = await client.post('/v1/crypto_addresses', { wallet_id: wallet, currency_code: 'BTC', address: randomBtcAddress() });
      if (addr.status !== 201) throw new Error(`address: ${addr.status} ${JSON.stringify(addr.body)}`);
      // Two open invoices of 100.00 each.
      for (const due of ['2027-01-01', '2027-02-01']) {
        const inv = await client.post('/v1/invoices', { customer_id: c.id, due_date: due, line_items: [{ price_id: price.id }] });
        if (inv.status !== 201) throw new Error(`invoice: ${inv.status} ${JSON.stringify(inv.body)}`);
      }
      customers.push({ id: c.id, addressId: addr.body.id });
    });

    // 0.001 BTC = 50.00 USD at the fixed oracle: more than the invoices of a customer can take, so some becomes credit.
    ctx.progress(`allocations: ${opts.transactions} transactions over ${opts.customers} customers; the worker is killed at a third, the API at two thirds`);
    const hashes = Array.from({ length: opts.transactions }, () => randomBytes(32).toString('hex'));
    let done = 0;
    let workerFault: Promise<void> | null = null;
    let apiFault: Promise<void> | null = null;
    let lastRestart = Date.now();
    let pendingAtKill = 0;
    const pending = (before?: Date) => CryptoTransaction.countDocuments({ account_id: app.accountId, allocated_at: null, ...(before ? { created_at: { $lt: before } } : {}) });
    const statuses = new Map<number, number>();
    await pool(hashes, 10, async (hash, i) => {
      const c = customers[i % customers.length];
      const res = await client.post('/v1/crypto_transactions', { to_address_id: c.addressId, amount: '0.001', currency_code: 'BTC', transaction_id: hash });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      done += 1;
      if (!workerFault && done >= opts.transactions / 3) {
        workerFault = (async () => {
          // Killed once some allocation is seen pending; counted again after the kill (only the
          // worker allocates) among the transactions written before it.
          await waitUntil('an allocation pending', async () => (await pending()) > 0, 30_000, 20).catch(() => undefined);
          const killedAt = new Date();
          await app.worker.kill9();
          pendingAtKill = await pending(killedAt);
          ctx.progress(`allocations: worker killed after ${done} transactions, ${pendingAtKill} allocations pending`);
          await sleep(1_000);
          await app.worker.start();
          lastRestart = Math.max(lastRestart, Date.now());
        })();
      }
      // The API goes down with requests of the other lanes in flight; they are retried with their keys.
      if (!apiFault && done >= (2 * opts.transactions) / 3) {
        apiFault = (async () => {
          await app.api.kill9();
          ctx.progress(`allocations: API killed after ${done} transactions`);
          await sleep(1_000);
          await app.api.start();
          lastRestart = Math.max(lastRestart, Date.now());
        })();
      }
    });
    await workerFault;
    await apiFault;
    await waitUntil('every transaction allocated', async () => (await CryptoTransaction.countDocuments({ account_id: app.accountId, allocated_at: null })) === 0, 300_000, 500);
    const recovered = seconds(lastRestart);

    const txs = await CryptoTransaction.find({ account_id: app.accountId }).lean<CryptoTransactionDoc[]>();
    const invoices = await Invoice.find({ account_id: app.accountId }).lean<InvoiceDoc[]>();
    let lost = 0;
    let doubled = 0;
    const problems: string[] = [];
    const byHash = new Map<string, number>();
    for (const t of txs) byHash.set(t.transaction_id, (byHash.get(t.transaction_id) ?? 0) + 1);
    for (const h of hashes) {
      const n = byHash.get(h) ?? 0;
      if (n === 0) lost += 1;
      if (n > 1) doubled += n - 1;
    }
    // Every transaction: allocated, its entries plus its credit equal its value, each entry on its invoice once.
    const onInvoices = new Map<string, number>();
    for (const inv of invoices) for (const e of cryptoAllocationsOf(inv)) onInvoices.set(e.id, (onInvoices.get(e.id) ?? 0) + 1);
    for (const t of txs) {
      if (!t.allocated_at || !t.usd_value) {
        lost += 1;
        problems.push(`${t._id} not allocated`);
        continue;
      }
      const applied = (t.allocations ?? []).reduce((s, a) => s.plus(a.amount_applied), new Decimal(0));
      if (!applied.plus(t.unallocated_amount ?? '0').eq(t.usd_value)) {
        lost += 1;
        problems.push(`${t._id}: ${applied} applied + ${t.unallocated_amount} credit != ${t.usd_value}`);
      }
      for (const a of t.allocations ?? []) {
        const n = onInvoices.get(a._id) ?? 0;
        if (n === 0) {
          lost += 1;
          problems.push(`${t._id}: allocation ${a._id} not on invoice ${a.invoice_id}`);
        }
        if (n > 1) doubled += n - 1;
      }
    }
    // Every invoice: `amount_paid` is what its entries applied (below: money applied and not
    // counted; above: counted with no entry behind it), its status what `amount_paid` makes it
    // (paid from total less slippage on, the planner's rule), never beyond its total plus
    // slippage (by its entries or by `amount_paid`), no entry twice.
    const slippage = new Decimal(SLIPPAGE);
    const takenBy = new Map<string, Decimal>();
    for (const inv of invoices) {
      const entries = cryptoAllocationsOf(inv);
      const applied = entries.reduce((s, e) => s.plus(e.amount_applied), new Decimal(0));
      const paid = new Decimal(inv.amount_paid ?? '0');
      if (paid.lt(applied)) lost += 1;
      if (paid.gt(applied)) doubled += 1;
      if (!paid.eq(applied)) problems.push(`${inv._id}: amount_paid ${inv.amount_paid} != entries ${applied}`);
      const total = new Decimal(inv.total_amount);
      const status = paid.gte(total.times(new Decimal(1).minus(slippage))) ? 'paid' : 'pending';
      // Open is pending or overdue (its due date passed).
      if (status === 'paid' ? inv.status !== 'paid' : !OPEN_INVOICE_STATUSES.includes(inv.status)) {
        lost += 1;
        problems.push(`${inv._id}: status ${inv.status} with ${inv.amount_paid} paid of ${inv.total_amount} (should be ${status})`);
      }
      if (Decimal.max(paid, applied).gt(total.times(new Decimal(1).plus(slippage)))) {
        doubled += 1;
        problems.push(`${inv._id}: overpaid ${paid} (entries ${applied}) of ${inv.total_amount}`);
      }
      doubled += entries.length - new Set(entries.map((e) => e.id)).size;
      takenBy.set(inv.customer_id, (takenBy.get(inv.customer_id) ?? new Decimal(0)).plus(paid));
    }
    // Every customer: its credit as the API reports it (GET /v1/reports/collections) is what it
    // paid in less what its invoices took; less is money gone, more is money made.
    const paidIn = new Map<string, Decimal>();
    for (const t of txs) if (t.customer_id) paidIn.set(t.customer_id, (paidIn.get(t.customer_id) ?? new Decimal(0)).plus(t.usd_value ?? '0'));
    const report = await client.get('/v1/reports/collections');
    if (report.status !== 200) throw new Error(`collections report: ${report.status} ${JSON.stringify(report.body)}`);
    const credit = new Map<string, string>((report.body.unallocated_credit as { customer_id: string | null; amount: string }[]).map((c) => [c.customer_id ?? '', c.amount]));
    for (const c of customers) {
      const leftOver = (paidIn.get(c.id) ?? new Decimal(0)).minus(takenBy.get(c.id) ?? new Decimal(0));
      const reported = new Decimal(credit.get(c.id) ?? '0');
      if (reported.lt(leftOver)) lost += 1;
      if (reported.gt(leftOver)) doubled += 1;
      if (!reported.eq(leftOver)) problems.push(`customer ${c.id}: credit ${reported} reported, ${leftOver} left over (${paidIn.get(c.id)} paid in, ${takenBy.get(c.id)} taken by invoices)`);
    }
    return {
      name: 'worker-and-api-kill-during-allocations',
      operations: opts.transactions,
      lost,
      doubled,
      recoveredSeconds: recovered,
      details: [
        `${txs.length} transactions stored for ${hashes.length} sent; answers ${[...statuses].map(([s, n]) => `${n}x${s}`).join(', ')}; ${invoices.filter((i) => i.status === 'paid').length}/${invoices.length} invoices paid`,
        `${pendingAtKill} allocations pending when the worker was killed; credit reported for ${credit.size} customers`,
        ...problems.slice(0, 10),
      ],
      inProgressAtFault: pendingAtKill,
    };
  } finally {
    await app.close();
  }
}

export async function findWallet(client: ApiClient, customerId: string): Promise<string> {
  for (let page = 1; ; page++) {
    const res = (await client.get(`/v1/wallets?page=${page}`)).body;
    const w = res.wallets.find((x: any) => x.owner_id === customerId);
    if (w) return w.id;
    if (page >= res.pagination.pages) throw new Error(`no wallet for ${customerId}`);
  }
}
