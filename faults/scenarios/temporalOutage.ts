/**
 * Scenario 4: the Temporal server is stopped while the API takes writes (customers, invoices,
 * subscriptions, transactions), then started again. Writes keep answering 2xx; after recovery,
 * from the clients' side, every write answered 2xx has its event (delivered), its workflow (an
 * invoice's due date, a subscription's, a transaction's allocation) and, for a transaction, its
 * allocation; and every event of the account since the endpoint exists was delivered.
 */
import { randomBytes } from 'node:crypto';
import { bech32 } from '@scure/base';
import { Client, Connection } from '@temporalio/client';
import { loadTemporalConfig } from '../../src/config';
import { grpcConnectionOptions } from '../../src/temporal/client';
import Decimal from 'decimal.js';
import { CryptoTransaction, CryptoTransactionDoc } from '../../src/models/cryptoTransaction';
import { Event } from '../../src/models/event';
import { Invoice, InvoiceDoc } from '../../src/models/invoice';
import { cryptoAllocationsOf } from '../../src/services/billing/invoiceWrites';
import { WebhookDelivery } from '../../src/models/webhookDelivery';
import { workflowIds } from '../../src/temporal/workflowIds';
import { ScenarioContext, ScenarioResult, seconds, startScenarioApp } from '../scenario';
import { ManagedProcess, sleep, waitUntil } from '../stack';
import { receiverCa, startReceiver } from '../receiver';

/** The event each write answered 2xx must have (its `payload.id` is the write's id). */
const EVENT_OF = {
  customer: 'customer.created',
  invoice: 'invoice.created',
  subscription: 'subscription.created',
  address: 'crypto_address.created',
  transaction: 'crypto_transaction.received',
} as const;

/**
 * `temporal` is what goes down: the dev server (SIGTERM), or one service of the real server
 * (cluster-history-kill: its history service, `signal: 'SIGKILL'`, started again after `outageMs`
 * as a supervisor would); `name` names the result line. `fixedOutage`: it is started again after
 * `outageMs` even when the writes are not done (they go on across the restart), instead of after
 * the writes and at least `outageMs`.
 */
export async function temporalOutage(ctx: ScenarioContext, temporal: ManagedProcess, opts: { writes: number; outageMs: number; signal?: NodeJS.Signals; name?: string; fixedOutage?: boolean }): Promise<ScenarioResult> {
  const signal = opts.signal ?? 'SIGTERM';
  const ca = receiverCa(ctx.runDir);
  const app = await startScenarioApp(ctx, 'temporal_outage', ca.env);
  const received = new Map<string, number>();
  const receiver = await startReceiver(ca, (id) => {
    received.set(id, (received.get(id) ?? 0) + 1);
    return 200;
  });
  try {
    const { client } = app;
    const url = receiver.url;
    const endpoint = await client.post('/v1/webhook_endpoints', { url, subscriptions: ['*'] });
    if (endpoint.status !== 201) throw new Error('endpoint not created');
    // Events before the endpoint existed (the account's wallets) are not for it.
    const since = new Date(endpoint.body.created_at);
    const product = (await client.post('/v1/products', { name: 'Outage plan' })).body;
    const once = (await client.post('/v1/prices', { product_id: product.id, amount: 2000 })).body;
    const monthly = (await client.post('/v1/prices', { product_id: product.id, amount: 1000, recurring: { interval: 'month', interval_count: 1 } })).body;

    ctx.progress(`temporal-outage: ${temporal.spec.name} stopped (${signal}) for ${opts.outageMs / 1000} s while ${opts.writes} writes are made`);
    await temporal.stop(signal);
    const stoppedAt = Date.now();
    let backAt = 0;
    let writesWhileDown = 0;
    const restarted = opts.fixedOutage
      ? sleep(opts.outageMs).then(async () => {
          writesWhileDown = statuses.length;
          await temporal.start();
          backAt = Date.now();
        })
      : null;
    // Straight requests, no retry: each must answer 2xx while Temporal is away.
    const raw = async (path: string, body: unknown) => {
      const res = await fetch(app.apiUrl + path, { method: 'POST', headers: { Authorization: `Bearer ${app.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json().catch(() => null)) as any };
    };
    const statuses: number[] = [];
    // Every write answered 2xx, with what it made: the clients' side of the checks below.
    const acknowledged: { kind: keyof typeof EVENT_OF; id: string; customerId: string }[] = [];
    const note = (kind: keyof typeof EVENT_OF, customerId: string, r: { status: number; body: any }) => {
      statuses.push(r.status);
      if (r.status >= 200 && r.status < 300 && typeof r.body?.id === 'string') acknowledged.push({ kind, id: r.body.id, customerId });
    };
    const kinds = ['customer', 'invoice', 'subscription', 'transaction'] as const;
    for (let i = 0; statuses.length < opts.writes; i++) {
      const c = await raw('/v1/customers', { email: `outage${i}@faults.example.com` });
      note('customer', c.body?.id, c);
      if (c.status !== 201) continue;
      for (const kind of kinds.slice(1)) {
        if (statuses.length >= opts.writes) break;
        let r;
        if (kind === 'invoice') r = await raw('/v1/invoices', { customer_id: c.body.id, due_date: '2027-03-01', line_items: [{ price_id: once.id }] });
        else if (kind === 'subscription') r = await raw('/v1/subscriptions', { customer_id: c.body.id, phases: [{ start_date: new Date(Date.now() + 86_400_000).toISOString(), items: [{ price_id: monthly.id }] }] });
        else {
          const wallets = (await client.get(`/v1/wallets?page=1`)).body.wallets as any[];
          const wallet = wallets.find((w) => w.owner_id === c.body.id);
          const addr = await raw('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: bech32.encode('bc', [0, ...bech32.toWords(randomBytes(20))]) });
          note('address', c.body.id, addr);
          r = await raw('/v1/crypto_transactions', { to_address_id: addr.body?.id, amount: '0.0002', currency_code: 'BTC', transaction_id: randomBytes(32).toString('hex') });
        }
        note(kind, c.body.id, r);
      }
    }
    const writesSeconds = seconds(stoppedAt);
    if (restarted) await restarted;
    else {
      const left = opts.outageMs - (Date.now() - stoppedAt);
      if (left > 0) await sleep(left);
      await temporal.start();
      backAt = Date.now();
      writesWhileDown = statuses.length;
    }

    // TLS and API key as the scenario's API and worker read them (they inherit this environment).
    const temporalConfig = loadTemporalConfig({ ...process.env, ...ctx.temporalEnv });
    const connection = await Connection.connect(grpcConnectionOptions({ ...temporalConfig, address: ctx.temporalAddress }));
    const temporalClient = new Client({ connection, namespace: temporalConfig.namespace });
    const exists = async (id: string) => {
      try {
        await temporalClient.workflow.getHandle(id).describe();
        return true;
      } catch {
        return false;
      }
    };
    // Events recorded twice for one write (doubled), as the last check found them.
    let extraEvents = 0;
    const missing = async () => {
      const out: string[] = [];
      extraEvents = 0;
      const events = (await Event.find({ account_id: app.accountId }, { _id: 1, event: 1, timestamp: 1, 'payload.id': 1 }).lean<{ _id: string; event: string; timestamp: Date; payload: { id?: string } }[]>()).filter((e) => new Date(e.timestamp) >= since);
      for (const e of events) if (!received.has(e._id)) out.push(`event ${e.event} ${e._id} not delivered`);
      const txs = new Map((await CryptoTransaction.find({ account_id: app.accountId }).lean<CryptoTransactionDoc[]>()).map((t) => [t._id, t]));
      const invoices = new Map((await Invoice.find({ account_id: app.accountId }).lean<InvoiceDoc[]>()).map((i) => [i._id, i]));
      for (const w of acknowledged) {
        const own = events.filter((e) => e.event === EVENT_OF[w.kind] && e.payload?.id === w.id);
        if (!own.length) out.push(`${w.kind} ${w.id}: no ${EVENT_OF[w.kind]} event`);
        extraEvents += Math.max(0, own.length - 1);
        const workflow = w.kind === 'invoice' ? workflowIds.invoiceDue(w.id) : w.kind === 'subscription' ? workflowIds.subscription(w.id) : w.kind === 'transaction' ? workflowIds.allocation(w.customerId) : null;
        if (workflow && !(await exists(workflow))) out.push(`${w.kind} ${w.id}: no workflow ${workflow}`);
        if (w.kind !== 'transaction') continue;
        // Its allocation: finished, what it applied plus its credit is its value, each entry on its invoice.
        const t = txs.get(w.id);
        if (!t?.allocated_at || !t.usd_value) {
          out.push(`transaction ${w.id} not allocated`);
          continue;
        }
        const applied = (t.allocations ?? []).reduce((sum, a) => sum.plus(a.amount_applied), new Decimal(0));
        if (!applied.plus(t.unallocated_amount ?? '0').eq(t.usd_value)) out.push(`transaction ${w.id}: ${applied} applied + ${t.unallocated_amount} credit != ${t.usd_value}`);
        for (const a of t.allocations ?? []) {
          const inv = invoices.get(a.invoice_id);
          if (!inv || !cryptoAllocationsOf(inv).some((e) => e.id === a._id)) out.push(`transaction ${w.id}: allocation ${a._id} not on invoice ${a.invoice_id}`);
        }
      }
      return out;
    };
    let lastMissing: string[] = [];
    await waitUntil('events delivered and workflows started after the outage', async () => (lastMissing = await missing()).length === 0, 180_000, 1_000).catch(() => undefined);
    const recovered = seconds(backAt);
    await connection.close();
    const deliveries = await WebhookDelivery.countDocuments({ account_id: app.accountId });
    const pairs = new Set((await WebhookDelivery.find({ account_id: app.accountId }, { event_id: 1 }).lean<{ event_id: string }[]>()).map((d) => d.event_id)).size;
    const failedWrites = statuses.filter((s) => s < 200 || s >= 300).length;
    return {
      name: opts.name ?? 'temporal-stopped-during-writes',
      operations: statuses.length,
      lost: failedWrites + lastMissing.length,
      doubled: deliveries - pairs + extraEvents,
      recoveredSeconds: recovered,
      details: [
        `${statuses.length} writes in ${writesSeconds.toFixed(1)} s${opts.fixedOutage ? `, ${writesWhileDown} of them while ${temporal.spec.name} was down (${signal}, started again after ${opts.outageMs / 1000} s)` : ' of outage'}${ctx.apis && ctx.apis > 1 ? ` (${ctx.apis} APIs, ${ctx.workers ?? 1} workers)` : ''}: ${statuses.length - failedWrites} answered 2xx${failedWrites ? ` (others: ${statuses.filter((s) => s < 200 || s >= 300).join(', ')})` : ''}`,
        `${acknowledged.length} writes answered 2xx (${Object.keys(EVENT_OF).map((k) => `${acknowledged.filter((w) => w.kind === k).length} ${k}`).join(', ')}), each checked for its event, workflow and allocation`,
        `${received.size} events delivered after recovery; ${lastMissing.length} things missing${lastMissing.length ? `: ${lastMissing.slice(0, 5).join('; ')}` : ''}`,
      ],
    };
  } finally {
    if (!temporal.running) await temporal.start();
    await receiver.close();
    await app.close();
  }
}
