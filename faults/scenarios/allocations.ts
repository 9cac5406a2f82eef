/**
 * Scenario 3: `kill -9` the worker, then the API, during N manual transactions allocated across
 * C customers (each request retried with its Idempotency-Key until it lands). No transaction is
 * recorded or allocated twice, no invoice is paid beyond the slippage rule, and every
 * transaction is fully allocated or kept as credit.
 */
import { randomBytes } from 'node:crypto';
import { bech32 } from '@scure/base';
import Decimal from 'decimal.js';
import { CryptoTransaction, CryptoTransactionDoc } from '../../src/models/cryptoTransaction';
import { Invoice, InvoiceDoc } from '../../src/models/invoice';
import { cryptoAllocationsOf } from '../../src/services/invoices';
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
    const statuses = new Map<number, number>();
    await pool(hashes, 10, async (hash, i) => {
      const c = customers[i % customers.length];
      const res = await client.post('/v1/crypto_transactions', { to_address_id: c.addressId, amount: '0.001', currency_code: 'BTC', transaction_id: hash });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      done += 1;
      if (!workerFault && done >= opts.transactions / 3) {
        workerFault = (async () => {
          await app.worker.kill9();
          ctx.progress(`allocations: worker killed after ${done} transactions`);
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
    // Every invoice: paid what its entries say, never beyond its total plus slippage, no entry twice.
    for (const inv of invoices) {
      const entries = cryptoAllocationsOf(inv);
      const paid = entries.reduce((s, e) => s.plus(e.amount_applied), new Decimal(0));
      if (!paid.eq(inv.amount_paid ?? '0')) problems.push(`${inv._id}: amount_paid ${inv.amount_paid} != entries ${paid}`);
      if (paid.gt(new Decimal(inv.total_amount).times(new Decimal(1).plus(SLIPPAGE)))) {
        doubled += 1;
        problems.push(`${inv._id}: overpaid ${paid} of ${inv.total_amount}`);
      }
      doubled += entries.length - new Set(entries.map((e) => e.id)).size;
    }
    return {
      name: 'worker-and-api-kill-during-allocations',
      operations: opts.transactions,
      lost,
      doubled,
      recoveredSeconds: recovered,
      details: [
        `${txs.length} transactions stored for ${hashes.length} sent; answers ${[...statuses].map(([s, n]) => `${n}x${s}`).join(', ')}; ${invoices.filter((i) => i.status === 'paid').length}/${invoices.length} invoices paid`,
        ...problems.slice(0, 10),
      ],
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
