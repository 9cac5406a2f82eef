/**
 * Scenario 1: `kill -9` the worker while N subscriptions renew at the same instant, then start
 * it again. Every period is invoiced exactly once: none missing, none doubled. The kill must
 * find renewals still to do (fewer invoices than subscriptions), or the scenario fails.
 */
import { Invoice, InvoiceDoc } from '../../src/models/invoice';
import { Subscription } from '../../src/models/subscription';
import { pool } from '../client';
import { ScenarioContext, ScenarioResult, seconds, startScenarioApp } from '../scenario';
import { sleep, waitUntil } from '../stack';

/**
 * `restart: false` (the cluster scenario, two workers): the killed worker stays down until the
 * checks are done, and the other one must finish the renewals; recovery counts from the kill.
 */
export async function renewalsUnderWorkerKill(ctx: ScenarioContext, opts: { subscriptions: number; restart?: boolean }): Promise<ScenarioResult> {
  const restart = opts.restart ?? true;
  const app = await startScenarioApp(ctx, 'renewals');
  try {
    const { client } = app;
    const product = (await client.post('/v1/products', { name: 'Fault plan' })).body;
    const price = (await client.post('/v1/prices', { product_id: product.id, amount: 1500, recurring: { interval: 'month', interval_count: 1 } })).body;
    const customers: string[] = [];
    await pool(Array.from({ length: Math.min(50, opts.subscriptions) }, (_, i) => i), 8, async (i) => {
      const c = await client.post('/v1/customers', { email: `renew${i}@faults.example.com` });
      if (c.status !== 201) throw new Error(`customer: ${c.status} ${JSON.stringify(c.body)}`);
      customers.push(c.body.id);
    });

    // One billing instant for all, far enough ahead that every subscription exists by then.
    const lead = 10_000 + opts.subscriptions * 150;
    const instant = new Date(Math.ceil((Date.now() + lead) / 1000) * 1000);
    ctx.progress(`renewals: creating ${opts.subscriptions} subscriptions starting ${instant.toISOString()}`);
    await pool(Array.from({ length: opts.subscriptions }, (_, i) => i), 8, async (i) => {
      const s = await client.post('/v1/subscriptions', { customer_id: customers[i % customers.length], phases: [{ start_date: instant.toISOString(), items: [{ price_id: price.id }] }] });
      if (s.status !== 201) throw new Error(`subscription: ${s.status} ${JSON.stringify(s.body)}`);
    });
    if (Date.now() >= instant.getTime()) throw new Error('creating the subscriptions overran the billing instant; the kill would not hit renewals in progress');
    const expected = await Subscription.countDocuments({ account_id: app.accountId });

    // The kill lands while invoices are being generated: once the first one exists.
    await sleep(instant.getTime() - Date.now());
    const billed = () => Invoice.countDocuments({ account_id: app.accountId, subscription_id: { $ne: null } });
    await waitUntil('the first renewal invoice', async () => (await billed()) > 0, 60_000, 20);
    await app.worker.kill9();
    const atKill = await billed();
    ctx.progress(`renewals: worker killed with ${atKill}/${expected} invoices generated${restart ? '' : `; ${app.workers.length - 1} other worker(s) left to finish`}`);
    let restartedAt = Date.now();
    if (restart) {
      await sleep(2_000);
      restartedAt = Date.now();
      await app.worker.start();
    }
    await waitUntil(`${expected} renewal invoices`, async () => (await billed()) >= expected, 300_000, 250);
    const recovered = seconds(restartedAt);
    // Anything doubled would show up shortly after the last expected one.
    await sleep(3_000);

    const invoices = await Invoice.find({ account_id: app.accountId, subscription_id: { $ne: null } }).lean<InvoiceDoc[]>();
    const subs = await Subscription.find({ account_id: app.accountId }, { _id: 1 }).lean<{ _id: string }[]>();
    const perPeriod = new Map<string, number>();
    for (const inv of invoices) {
      const key = `${inv.subscription_id}|${inv.period_start ? new Date(inv.period_start).toISOString() : 'none'}`;
      perPeriod.set(key, (perPeriod.get(key) ?? 0) + 1);
    }
    const period = instant.toISOString();
    let lost = 0;
    for (const s of subs) if (!perPeriod.has(`${s._id}|${period}`)) lost += 1;
    let doubled = 0;
    for (const n of perPeriod.values()) doubled += Math.max(0, n - 1);
    // An invoice for another period than the one billed at the instant would be a wrong one too.
    const stray = [...perPeriod.keys()].filter((k) => !k.endsWith(`|${period}`)).length;
    return {
      name: 'worker-kill-during-renewals',
      operations: expected,
      lost,
      doubled: doubled + stray,
      recoveredSeconds: recovered,
      details: [
        `${atKill}/${expected} invoices existed when the worker was killed; ${invoices.length} after recovery; ${stray} for another period`,
        ...(restart ? [] : [`${app.apis.length} APIs, ${app.workers.length} workers; the killed worker stayed down (recovered: from the kill to the last invoice)`]),
      ],
      // Counted after the kill (only the worker makes them): renewals the dead worker left undone.
      inProgressAtFault: Math.max(0, expected - atKill),
    };
  } finally {
    await app.close();
  }
}
