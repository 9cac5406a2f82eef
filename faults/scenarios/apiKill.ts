/**
 * cluster-api-kill: two API processes behind a client that sends each attempt to the next one
 * (round robin, as a balancer without health checks); `kill -9` of one of them during N creates
 * (a customer, then an invoice for it: the invoice has no natural key, only the Idempotency-Key
 * stands between a retry and a second one), started again 5 s later as a supervisor would.
 * Clients retry as the README says: the same key on a connection error, a 5xx or the 409 of a
 * key still held by the killed request. Every create lands exactly once: one customer per email,
 * one invoice per customer, one `customer.created` and one `invoice.created` event each. Some
 * requests must have been cut in flight by the kill, or the scenario fails.
 */
import { randomUUID } from 'node:crypto';
import { Customer } from '../../src/models/customer';
import { Event } from '../../src/models/event';
import { Invoice } from '../../src/models/invoice';
import { Answer, pool } from '../client';
import { ScenarioContext, ScenarioResult, startScenarioApp } from '../scenario';
import { sleep, waitUntil } from '../stack';

export async function apiKillDuringCreates(ctx: ScenarioContext, opts: { creates: number; lanes?: number }): Promise<ScenarioResult> {
  const app = await startScenarioApp(ctx, 'api_kill');
  // The kill and the restart: awaited before the processes are stopped, whatever happened.
  let fault: Promise<void> | null = null;
  try {
    const { client } = app;
    const product = (await client.post('/v1/products', { name: 'Kill goods' })).body;
    const price = (await client.post('/v1/prices', { product_id: product.id, amount: 2500 })).body;
    const victim = app.apis[app.apis.length - 1];
    ctx.progress(`api-kill: ${opts.creates} customers and invoices over ${app.apis.length} APIs; ${victim.spec.name} killed a third of the way in, started again 5 s later`);
    let done = 0;
    let killedAt = 0;
    // When the last create that had to be retried landed: recovery, from the kill.
    let lastRetryLanded = 0;
    const answers: Answer[] = [];
    const statuses = new Map<string, number>();
    const note = (what: string, a: Answer) => {
      answers.push(a);
      if (a.failures.length) lastRetryLanded = Date.now();
      statuses.set(`${what} ${a.status}`, (statuses.get(`${what} ${a.status}`) ?? 0) + 1);
    };
    const invoiceOf = new Map<string, string>();
    const takenOver: string[] = [];
    await pool(Array.from({ length: opts.creates }, (_, i) => i), opts.lanes ?? 10, async (i) => {
      const email = `apikill${i}@faults.example.com`;
      const c = await client.post('/v1/customers', { email }, randomUUID());
      note('customer', c);
      let customerId: string | undefined = c.body?.id;
      // README: a retry that takes over the key of a killed request whose write had landed meets
      // the duplicate rule (422 email taken) rather than a replay of the lost 201: settled, once.
      if (c.status === 422 && c.failures.length && c.body?.error?.param === 'email') {
        takenOver.push(email);
        customerId = (await Customer.findOne({ account_id: app.accountId, email }, { _id: 1 }).lean<{ _id: string }>())?._id;
      } else if (c.status !== 201) throw new Error(`customer ${i}: ${c.status} ${JSON.stringify(c.body)}`);
      if (!customerId) throw new Error(`customer ${i}: answered ${c.status} and not stored`);
      const inv = await client.post('/v1/invoices', { customer_id: customerId, due_date: '2027-04-01', line_items: [{ price_id: price.id }] }, randomUUID());
      note('invoice', inv);
      if (inv.status !== 201) throw new Error(`invoice ${i}: ${inv.status} ${JSON.stringify(inv.body)}`);
      invoiceOf.set(customerId, inv.body.id);
      done += 1;
      if (!fault && done >= opts.creates / 3) {
        fault = (async () => {
          await victim.kill9();
          killedAt = Date.now();
          ctx.progress(`api-kill: ${victim.spec.name} killed after ${done} creates`);
          await sleep(5_000);
          await victim.start();
        })();
      }
    });
    await fault;

    const customers = await Customer.find({ account_id: app.accountId }, { _id: 1, email: 1 }).lean<{ _id: string; email: string }[]>();
    const invoices = await Invoice.find({ account_id: app.accountId }, { _id: 1, customer_id: 1 }).lean<{ _id: string; customer_id: string }[]>();
    const perEmail = new Map<string, number>();
    for (const c of customers) perEmail.set(c.email, (perEmail.get(c.email) ?? 0) + 1);
    const perCustomer = new Map<string, number>();
    for (const inv of invoices) perCustomer.set(inv.customer_id, (perCustomer.get(inv.customer_id) ?? 0) + 1);
    let lost = 0;
    let doubled = 0;
    const problems: string[] = [];
    for (let i = 0; i < opts.creates; i++) {
      const n = perEmail.get(`apikill${i}@faults.example.com`) ?? 0;
      if (n === 0) lost += 1;
      doubled += Math.max(0, n - 1);
    }
    for (const [customerId, invoiceId] of invoiceOf) {
      const n = perCustomer.get(customerId) ?? 0;
      if (n === 0) {
        lost += 1;
        problems.push(`invoice ${invoiceId} (answered 201) not stored`);
      }
      if (n > 1) problems.push(`customer ${customerId}: ${n} invoices`);
      doubled += Math.max(0, n - 1);
    }
    // One event per create (the events are recorded with the write).
    const eventsOf = async () => {
      const events = await Event.find({ account_id: app.accountId, event: { $in: ['customer.created', 'invoice.created'] } }, { event: 1, 'payload.id': 1 }).lean<{ event: string; payload: { id: string } }[]>();
      const per = new Map<string, number>();
      for (const e of events) per.set(`${e.event}|${e.payload.id}`, (per.get(`${e.event}|${e.payload.id}`) ?? 0) + 1);
      return per;
    };
    let per = await eventsOf();
    const wanted = [...customers.map((c) => `customer.created|${c._id}`), ...invoices.map((i) => `invoice.created|${i._id}`)];
    await waitUntil(
      'one event per create',
      async () => {
        per = await eventsOf();
        return wanted.every((k) => per.has(k));
      },
      30_000,
      500,
    ).catch(() => undefined);
    const eventsMissing = wanted.filter((k) => !per.has(k)).length;
    const eventsExtra = [...per.values()].reduce((n, k) => n + Math.max(0, k - 1), 0);
    lost += eventsMissing;
    doubled += eventsExtra;
    const dropped = answers.reduce((n, a) => n + a.dropped, 0);
    const retried = answers.filter((a) => a.failures.length > 0);
    const kinds = new Map<string, number>();
    for (const a of retried) for (const f of a.failures) kinds.set(String(f), (kinds.get(String(f)) ?? 0) + 1);
    return {
      name: 'api-kill-during-creates',
      operations: opts.creates * 2,
      lost,
      doubled,
      recoveredSeconds: Math.max(0, (lastRetryLanded - killedAt) / 1000),
      details: [
        `${app.apis.length} APIs, ${app.workers.length} workers, ${opts.lanes ?? 10} clients alternating between the APIs; answers ${[...statuses].map(([s, n]) => `${n}x ${s}`).join(', ')}`,
        `${retried.length} creates retried with their key (failed attempts: ${[...kinds].map(([k, n]) => `${n}x ${k}`).join(', ') || 'none'}; ${dropped} cut in flight by the kill); ${customers.length} customers and ${invoices.length} invoices stored for ${opts.creates} each; events: ${eventsMissing} missing, ${eventsExtra} extra`,
        `${takenOver.length} customer creates settled by a 422 email taken after a retry (the killed attempt had stored it; README, "Fault scenarios")`,
        ...problems.slice(0, 10),
      ],
      inProgressAtFault: dropped,
    };
  } finally {
    await (fault as Promise<void> | null)?.catch(() => undefined);
    await app.close();
  }
}
