/**
 * Scenario 4: the Temporal server is stopped while the API takes writes (customers, invoices,
 * subscriptions, transactions), then started again. Writes keep answering 2xx; after recovery
 * every event is delivered and every workflow that should exist exists (due dates,
 * subscriptions, allocations: every transaction allocated).
 */
import { randomBytes } from 'node:crypto';
import { bech32 } from '@scure/base';
import { Client, Connection } from '@temporalio/client';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';
import { Event } from '../../src/models/event';
import { Invoice } from '../../src/models/invoice';
import { Subscription } from '../../src/models/subscription';
import { WebhookDelivery } from '../../src/models/webhookDelivery';
import { workflowIds } from '../../src/temporal/workflowIds';
import { ScenarioContext, ScenarioResult, seconds, startScenarioApp } from '../scenario';
import { ManagedProcess, sleep, waitUntil } from '../stack';
import { receiverCa, startReceiver } from '../receiver';

export async function temporalOutage(ctx: ScenarioContext, temporal: ManagedProcess, opts: { writes: number; outageMs: number }): Promise<ScenarioResult> {
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

    ctx.progress(`temporal-outage: Temporal stopped for ${opts.outageMs / 1000} s while ${opts.writes} writes are made`);
    await temporal.stop('SIGTERM');
    const stoppedAt = Date.now();
    // Straight requests, no retry: each must answer 2xx while Temporal is away.
    const raw = async (path: string, body: unknown) => {
      const res = await fetch(app.apiUrl + path, { method: 'POST', headers: { Authorization: `Bearer ${app.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json().catch(() => null)) as any };
    };
    const statuses: number[] = [];
    const kinds = ['customer', 'invoice', 'subscription', 'transaction'] as const;
    for (let i = 0; statuses.length < opts.writes; i++) {
      const c = await raw('/v1/customers', { email: `outage${i}@faults.example.com` });
      statuses.push(c.status);
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
          statuses.push(addr.status);
          r = await raw('/v1/crypto_transactions', { to_address_id: addr.body?.id, amount: '0.0002', currency_code: 'BTC', transaction_id: randomBytes(32).toString('hex') });
        }
        statuses.push(r.status);
      }
    }
    const left = opts.outageMs - (Date.now() - stoppedAt);
    if (left > 0) await sleep(left);
    const writesSeconds = seconds(stoppedAt);
    await temporal.start();
    const backAt = Date.now();

    const connection = await Connection.connect({ address: ctx.temporalAddress });
    const temporalClient = new Client({ connection });
    const exists = async (id: string) => {
      try {
        await temporalClient.workflow.getHandle(id).describe();
        return true;
      } catch {
        return false;
      }
    };
    const missing = async () => {
      const out: string[] = [];
      const events = (await Event.find({ account_id: app.accountId }, { _id: 1, event: 1, timestamp: 1 }).lean<{ _id: string; event: string; timestamp: Date }[]>()).filter((e) => new Date(e.timestamp) >= since);
      for (const e of events) if (!received.has(e._id)) out.push(`event ${e.event} ${e._id} not delivered`);
      for (const inv of await Invoice.find({ account_id: app.accountId, status: { $in: ['pending', 'overdue'] } }, { _id: 1 }).lean<{ _id: string }[]>()) {
        if (!(await exists(workflowIds.invoiceDue(inv._id)))) out.push(`no due-date workflow for ${inv._id}`);
      }
      for (const s of await Subscription.find({ account_id: app.accountId }, { _id: 1 }).lean<{ _id: string }[]>()) {
        if (!(await exists(workflowIds.subscription(s._id)))) out.push(`no workflow for ${s._id}`);
      }
      const unallocated = await CryptoTransaction.countDocuments({ account_id: app.accountId, allocated_at: null });
      if (unallocated) out.push(`${unallocated} transactions not allocated`);
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
      name: 'temporal-stopped-during-writes',
      operations: statuses.length,
      lost: failedWrites + lastMissing.length,
      doubled: deliveries - pairs,
      recoveredSeconds: recovered,
      details: [
        `${statuses.length} writes in ${writesSeconds.toFixed(1)} s of outage: ${statuses.length - failedWrites} answered 2xx${failedWrites ? ` (others: ${statuses.filter((s) => s < 200 || s >= 300).join(', ')})` : ''}`,
        `${received.size} events delivered after recovery; ${lastMissing.length} things missing${lastMissing.length ? `: ${lastMissing.slice(0, 5).join('; ')}` : ''}`,
      ],
    };
  } finally {
    if (!temporal.running) await temporal.start();
    await receiver.close();
    await app.close();
  }
}
