/**
 * The floor of an operation's CPU (issue 27): the same operation done with the least the contract
 * and the design ask for, measured in the same run, on the same stack, the way the section measures
 * the service. No service code: a bare HTTP server in this process for the API's half, the
 * MongoDB driver's own calls for the statements, and a worker in this process running
 * bench/floorWorkflows.ts (one workflow per customer, subscription, invoice due date and delivery,
 * each doing its work in one local activity, as the design asks).
 *
 * What each floor writes, and why it cannot write less. Every change's events need the account's
 * webhook endpoints read first (to write them dispatched when nobody receives them, or to start their
 * deliveries), once per write here (the service shares concurrent reads of one account's).
 * - payment (14 statements, a signal-with-start, and a signal to the invoice's due-date workflow
 *   when the payment pays it): the API token read, the Idempotency-Key reserved and its response
 *   kept (shared DECISIONS), the address read, the transaction written, the endpoints read and its
 *   `crypto_transaction.received` event written; then the transaction read (allocation must be
 *   idempotent), the customer's open invoices read, the allocation written, the invoice written, the
 *   endpoints read and its events (`transaction_allocation.created`, `crypto_transaction.allocated`,
 *   `invoice.paid`) in one write, the transaction marked allocated. The unallocated transaction is
 *   itself the intent a sweeper would pick up.
 * - renewal (5 statements and the new invoice's due-date workflow started, with a start delay as the
 *   service's): the subscription read, the invoice written, the endpoints read, `invoice.created` and
 *   `subscription.renewed` in one write, the subscription's period moved on.
 * - delivery (6 statements, a workflow started and the signed HTTPS POST): the endpoints read, the
 *   event written, its delivery workflow started and the event marked dispatched (else a sweeper
 *   starts it: nothing lost); the attempt reads the endpoint (its secret stays out of the workflow's
 *   history) and the event, and writes the delivery record with its outcome.
 *
 * An operation whose goal (half of the first run's ratio) is below its floor has the floor plus 20%
 * as its goal instead (issue 27).
 */
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import type { Db } from 'mongodb';
import { Worker } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { clientTransportOf, connectTemporal, workerConnection } from '../src/temporal/client';
import { loadConfig } from '../src/config';
import { workerCapacity } from '../src/startup/workerOptions';
import { signWebhook } from '../src/cryptography/webhookSignature';
import { cpuBetween, cpuLine, readCpu, type CpuWindow, type InsertBaseline } from './cpu';
import { pool, until } from './support';
import type { Round, SideRounds } from './rounds';
import { floorAllocationWorkflow, floorCloseSignal, floorDeliveryWorkflow, floorDueWorkflow, floorPaymentSignal, floorSubscriptionWorkflow } from './floorWorkflows';

export interface FloorActivities {
  floorAllocate(customerId: string, txIds: string[]): Promise<void>;
  floorRenew(subscriptionId: string): Promise<void>;
  floorDeliver(eventId: string, endpointId: string): Promise<void>;
}

export interface Floor {
  /** CPU milliseconds of one operation at the floor, every process counted. */
  ms: number;
  statements: number;
  lines: string[];
}

const ACCOUNT = 'acct_floor';
const USD_PER_BTC = 50_000;

/** The collections a floor writes, dropped before and after. */
const COLLECTIONS = ['tokens', 'idempotency', 'addresses', 'transactions', 'events', 'invoices', 'allocations', 'subscriptions', 'endpoints', 'deliveries'];

interface FloorStack {
  db: Db;
  client: Client;
  taskQueue: string;
  eager: boolean;
  /** What floorDeliver posts through, set by the delivery floor. */
  delivery?: { post(url: string, body: string, headers: Record<string, string>): Promise<void> };
  /** Counted by the floor's activities as they finish (they run in this process): what a round waits on, at no cost to it. */
  done: { allocated: number; renewed: number };
  close(): Promise<void>;
}

function col(db: Db, name: string) {
  return db.collection<any>(`floor_${name}`);
}

function floorActivities(stack: () => FloorStack): FloorActivities {
  return {
    async floorAllocate(customerId, txIds) {
      const { db, client } = stack();
      for (const txId of txIds) {
        const tx = await col(db, 'transactions').findOne({ _id: txId });
        if (!tx || tx.allocated_at) continue;
        const [invoice] = await col(db, 'invoices').find({ account_id: ACCOUNT, customer_id: customerId, status: 'pending' }).sort({ due_date: 1 }).limit(10).toArray();
        const usd = Math.round(Number(tx.amount) * USD_PER_BTC * 100);
        const now = new Date();
        const events: Record<string, unknown>[] = [{ _id: `evt_${randomBytes(12).toString('hex')}`, account_id: ACCOUNT, type: 'crypto_transaction.allocated', data: { id: txId }, timestamp: now }];
        let paid = false;
        if (invoice) {
          const allocationId = `ta_${txId}_${invoice._id}`;
          await col(db, 'allocations').insertOne({ _id: allocationId, account_id: ACCOUNT, transaction_id: txId, invoice_id: invoice._id, amount_usd: usd, created_at: now });
          const amountPaid = invoice.amount_paid + usd;
          paid = amountPaid >= invoice.total;
          await col(db, 'invoices').updateOne({ _id: invoice._id }, { $set: { amount_paid: amountPaid, status: paid ? 'paid' : 'pending', updated_at: now } });
          events.unshift({ _id: `evt_${randomBytes(12).toString('hex')}`, account_id: ACCOUNT, type: 'transaction_allocation.created', data: { id: allocationId, invoice_id: invoice._id, amount: usd }, timestamp: now });
          if (paid) events.push({ _id: `evt_${randomBytes(12).toString('hex')}`, account_id: ACCOUNT, type: 'invoice.paid', data: { id: invoice._id, amount_paid: amountPaid }, timestamp: now });
        }
        const endpoints = await col(db, 'endpoints').find({ account_id: ACCOUNT }).toArray();
        await col(db, 'events').insertMany(events.map((e) => ({ ...e, dispatched: endpoints.length === 0 })), { ordered: false });
        await col(db, 'transactions').updateOne({ _id: txId }, { $set: { allocated_at: now, usd_price: USD_PER_BTC } });
        if (paid) await client.workflow.getHandle(`floor-due-${invoice._id}`).signal(floorCloseSignal);
        stack().done.allocated += 1;
      }
    },
    async floorRenew(subscriptionId) {
      const { db, client, taskQueue } = stack();
      const sub = await col(db, 'subscriptions').findOne({ _id: subscriptionId });
      if (!sub) return;
      const invoiceId = `in_${randomBytes(12).toString('hex')}`;
      const now = new Date();
      const due = now.getTime() + 30 * 86_400_000;
      await col(db, 'invoices').insertOne({ _id: invoiceId, account_id: ACCOUNT, customer_id: sub.customer_id, subscription_id: subscriptionId, billing_key: `${subscriptionId}:${sub.period}`, status: 'pending', total: sub.amount, amount_paid: 0, due_date: new Date(due), created_at: now });
      const endpoints = await col(db, 'endpoints').find({ account_id: ACCOUNT }).toArray();
      await col(db, 'events').insertMany(
        [
          { _id: `evt_${randomBytes(12).toString('hex')}`, account_id: ACCOUNT, type: 'invoice.created', data: { id: invoiceId }, timestamp: now, dispatched: endpoints.length === 0 },
          { _id: `evt_${randomBytes(12).toString('hex')}`, account_id: ACCOUNT, type: 'subscription.renewed', data: { id: subscriptionId }, timestamp: now, dispatched: endpoints.length === 0 },
        ],
        { ordered: false },
      );
      await col(db, 'subscriptions').updateOne({ _id: subscriptionId }, { $set: { period: sub.period + 1, updated_at: now } });
      await client.workflow.start(floorDueWorkflow, { workflowId: `floor-due-${invoiceId}`, taskQueue, startDelay: due - Date.now() });
      stack().done.renewed += 1;
    },
    async floorDeliver(eventId, endpointId) {
      const { db, delivery } = stack();
      const [endpoint, event] = await Promise.all([col(db, 'endpoints').findOne({ _id: endpointId }), col(db, 'events').findOne({ _id: eventId })]);
      if (!event || !endpoint || !delivery) throw new Error(`floor delivery ${eventId} -> ${endpointId}: nothing to deliver`);
      const body = JSON.stringify({ id: event._id, event: event.type, payload: event.data, timestamp: event.timestamp.toISOString() });
      const signature = await signWebhook(endpoint.secret, Math.floor(Date.now() / 1000), body);
      await delivery.post(endpoint.url, body, { 'Content-Type': 'application/json', 'X-Service-Signature': signature, 'X-Service-Event-Id': event._id });
      const now = new Date();
      await col(db, 'deliveries').insertOne({ _id: `wd_${eventId}_${endpointId}`, account_id: event.account_id, event_id: eventId, endpoint_id: endpointId, status: 'succeeded', attempts: [{ at: now, status: 200 }], created_at: now });
    },
  };
}

/** A worker on a task queue of its own running the floor's workflows, and a client, on the run's Temporal server. */
async function startFloorStack(delivery?: FloorStack['delivery']): Promise<FloorStack> {
  const db = mongoose.connection.db;
  if (!db) throw new Error('the floor needs the bench connected to its database');
  await Promise.all(COLLECTIONS.map((c) => col(db, c).drop().catch(() => undefined)));
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const server = { ...config.temporal, address: process.env.TEMPORAL_ADDRESS! };
  const taskQueue = `floor-${randomBytes(4).toString('hex')}`;
  const handle = await connectTemporal({ ...server, namespace: config.temporal.namespace, taskQueue, clientTransport: clientTransportOf(config.temporal.clientTransport, { role: 'worker', deno: false }) });
  const polling = await workerConnection(handle, server);
  let stack: FloorStack | undefined;
  const worker = await Worker.create({
    connection: polling.connection,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowsPath: require.resolve('./floorWorkflows'),
    activities: floorActivities(() => stack!),
    ...workerCapacity(config),
  });
  const run = worker.run();
  stack = {
    db,
    client: handle.client,
    taskQueue,
    eager: polling.shared,
    delivery,
    done: { allocated: 0, renewed: 0 },
    async close() {
      worker.shutdown();
      await run.catch(() => undefined);
      await polling.close().catch(() => undefined);
      await handle.connection.close().catch(() => undefined);
      await Promise.all(COLLECTIONS.map((c) => col(db, c).drop().catch(() => undefined)));
    },
  };
  return stack;
}


/**
 * Waits until the floor's activities have counted `target` (polled in memory), then confirms it
 * once with the database's exact count: a round's window holds no poll that reads the collection.
 */
async function waitForCount(what: string, target: number, counted: () => number, exact: () => Promise<number>): Promise<void> {
  await until(`the floor's ${what}`, async () => counted() >= target, 250);
  await until(`the floor's ${what} (in the database)`, async () => (await exact()) >= target, 250);
}

function floorResult(op: string, statements: number, count: number, cpu: CpuWindow, seconds: number, baseline: InsertBaseline, what: string): Floor {
  const ms = (cpu.total * 1000) / count;
  return {
    ms,
    statements,
    lines: [cpuLine(`the floor: ${count} ${what}`, cpu, seconds), `  floor per ${op}: ${statements} statements, ${ms.toFixed(2)} ms CPU = x${(ms / baseline.cpuMs).toFixed(1)} of a plain insert`],
  };
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

/** The floor of one operation, measured in rounds alternating with the service's (bench/rounds.ts). */
export interface FloorRounds extends SideRounds {
  /** The floor's figure from its rounds' sum. */
  result(sum: Round, baseline: InsertBaseline): Floor;
  close(): Promise<void>;
}

/**
 * Payments at the floor: `customers` customers with `invoicesPerCustomer` open invoices of 100.00
 * each, 0.001 BTC (50.00) a payment, `concurrency` POSTs in flight, as the crypto section sends
 * them; a round lasts from its first POST until every transaction is allocated. Warmed up first,
 * as the section warms the service up: one payment per customer, which starts its workflow.
 */
export async function startPaymentFloor(opts: { customers: number; invoicesPerCustomer: number; concurrency: number }): Promise<FloorRounds> {
  const stack = await startFloorStack();
  const { db, client, taskQueue } = stack;
  const token = randomBytes(24).toString('hex');
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  await col(db, 'transactions').createIndex({ account_id: 1, currency_code: 1, transaction_id: 1 }, { unique: true });
  await col(db, 'invoices').createIndex({ account_id: 1, customer_id: 1, status: 1 });
  await col(db, 'events').createIndex({ account_id: 1, timestamp: 1 });
  await col(db, 'tokens').insertOne({ _id: sha(token), account_id: ACCOUNT });
  const customers = Array.from({ length: opts.customers }, (_, i) => ({ id: `cus_floor${i}`, addressId: `addr_floor${i}` }));
  await col(db, 'addresses').insertMany(customers.map((c) => ({ _id: c.addressId, account_id: ACCOUNT, customer_id: c.id, currency_code: 'BTC', address: randomBytes(20).toString('hex') })));
  const invoices = customers.flatMap((c) => Array.from({ length: opts.invoicesPerCustomer }, (_, k) => ({ _id: `in_floor_${c.id}_${k}`, account_id: ACCOUNT, customer_id: c.id, status: 'pending', total: 10_000, amount_paid: 0, due_date: new Date(Date.UTC(2027, k, 1)) })));
  await col(db, 'invoices').insertMany(invoices);
  // Each invoice's due-date workflow, as creating it starts one (outside the measured window).
  await pool(invoices, 10, async (inv) => {
    await client.workflow.start(floorDueWorkflow, { workflowId: `floor-due-${inv._id}`, taskQueue, startDelay: inv.due_date.getTime() - Date.now() });
  });

  // The API's half: a bare HTTP server, no framework.
  const server = http.createServer(async (req, res) => {
    try {
      const body = JSON.parse(await readBody(req));
      const auth = await col(db, 'tokens').findOne({ _id: sha((req.headers.authorization ?? '').replace(/^Bearer /, '')) });
      if (!auth) throw new Error('floor: unknown token');
      const key = `${auth.account_id}:${req.headers['idempotency-key']}`;
      await col(db, 'idempotency').insertOne({ _id: key, request: sha(JSON.stringify(body)), created_at: new Date() });
      const address = await col(db, 'addresses').findOne({ _id: body.to_address_id, account_id: auth.account_id });
      if (!address) throw new Error('floor: unknown address');
      const tx = { _id: `ctx_${randomBytes(12).toString('hex')}`, account_id: auth.account_id, customer_id: address.customer_id, to_address_id: address._id, amount: body.amount, currency_code: body.currency_code, transaction_id: body.transaction_id, allocated_at: null, created_at: new Date() };
      await col(db, 'transactions').insertOne(tx);
      // Which endpoints receive the event (none here): it is written dispatched, or its deliveries are started.
      const endpoints = await col(db, 'endpoints').find({ account_id: auth.account_id }).toArray();
      await col(db, 'events').insertOne({ _id: `evt_${randomBytes(12).toString('hex')}`, account_id: auth.account_id, type: 'crypto_transaction.received', data: tx, timestamp: tx.created_at, dispatched: endpoints.length === 0 });
      await client.workflow.signalWithStart(floorAllocationWorkflow, { workflowId: `floor-alloc-${address.customer_id}`, taskQueue, args: [address.customer_id], signal: floorPaymentSignal, signalArgs: [tx._id] });
      const response = JSON.stringify({ id: tx._id, object: 'crypto_transaction', amount: tx.amount, currency_code: tx.currency_code, transaction_id: tx.transaction_id });
      await col(db, 'idempotency').updateOne({ _id: key }, { $set: { status: 201, response } });
      res.writeHead(201, { 'Content-Type': 'application/json' }).end(response);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/crypto_transactions`;
  let sent = 0;
  const pay = async (count: number) => {
    await pool(
      Array.from({ length: count }, (_, i) => sent + i),
      opts.concurrency,
      async (i) => {
        const res = await fetch(url, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomBytes(16).toString('hex') },
          body: JSON.stringify({ to_address_id: customers[i % customers.length].addressId, amount: '0.001', currency_code: 'BTC', transaction_id: randomBytes(32).toString('hex') }),
        });
        if (res.status !== 201) throw new Error(`floor payment: ${res.status} ${await res.text()}`);
        await res.json();
      },
    );
    sent += count;
    await waitForCount('allocation', sent, () => stack.done.allocated, () => col(db, 'transactions').countDocuments({ allocated_at: { $ne: null } }));
  };
  const close = async () => {
    server.close();
    await Promise.all(invoices.map((inv) => client.workflow.getHandle(`floor-due-${inv._id}`).terminate('floor measured').catch(() => undefined)));
    await stack.close();
  };
  try {
    await pay(customers.length);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    run: pay,
    result: (sum, baseline) => floorResult('payment', 14, sum.operations, sum.cpu, sum.seconds, baseline, 'payments (bare HTTP server, driver statements, one allocation workflow per customer)'),
    close,
  };
}

/**
 * Renewals at the floor: `count` subscription workflows over 50 customers, one billing instant;
 * measured from it until every invoice is written (after a warm-up of its own). One round of the
 * renewals section's, which alternate with the service's; their sum is renewalFloorResult's.
 */
export async function renewalFloor(count: number): Promise<Round> {
  const stack = await startFloorStack();
  const { db, client, taskQueue } = stack;
  await col(db, 'invoices').createIndex({ billing_key: 1 }, { unique: true });
  await col(db, 'events').createIndex({ account_id: 1, timestamp: 1 });
  // A warm-up round of WARM_UP subscriptions billed 10 s before the measured ones.
  const WARM_UP = 100;
  const subs = Array.from({ length: WARM_UP + count }, (_, i) => ({ _id: `sub_floor${i}`, account_id: ACCOUNT, customer_id: `cus_floor${i % 50}`, amount: 1500, period: 1 }));
  await col(db, 'subscriptions').insertMany(subs);
  const warmUpAt = Date.now() + 15_000 + subs.length * 15;
  const instant = warmUpAt + 10_000;
  const renewed: string[] = [];
  try {
    await pool(subs, 10, async (s) => {
      await client.workflow.start(floorSubscriptionWorkflow, { workflowId: `floor-sub-${s._id}`, taskQueue, args: [s._id, subs.indexOf(s) < WARM_UP ? warmUpAt : instant] });
    });
    if (Date.now() >= warmUpAt) throw new Error('floor renewals: starting the subscriptions overran the billing instant');
    await new Promise((r) => setTimeout(r, instant - Date.now()));
    const before = readCpu();
    const started = performance.now();
    await waitForCount('renewals', WARM_UP + count, () => stack.done.renewed, () => col(db, 'invoices').countDocuments({ account_id: ACCOUNT }));
    const cpu = cpuBetween(before, readCpu());
    renewed.push(...(await col(db, 'invoices').find({}, { projection: { _id: 1 } }).toArray()).map((i) => String(i._id)));
    return { cpu, seconds: (performance.now() - started) / 1000, operations: count };
  } finally {
    await pool([...subs.map((s) => `floor-sub-${s._id}`), ...renewed.map((id) => `floor-due-${id}`)], 10, async (id) => {
      await client.workflow.getHandle(id).terminate('floor measured').catch(() => undefined);
    });
    await stack.close();
  }
}

/** The renewal's floor from the rounds `renewalFloor` measured. */
export function renewalFloorResult(sum: Round, baseline: InsertBaseline): Floor {
  return floorResult('renewal', 5, sum.operations, sum.cpu, sum.seconds, baseline, 'renewals (one subscription workflow each, driver statements, the due-date workflow started)');
}

/**
 * Deliveries at the floor: events to one endpoint at `endpointUrl` (the section's HTTPS receiver,
 * which `post` trusts), `writers` events written at once; a round lasts from its first event until
 * `received` has counted every one. Warmed up first with 100.
 */
export async function startDeliveryFloor(opts: { writers: number; endpointUrl: string; post(url: string, body: string, headers: Record<string, string>): Promise<void>; received(): number }): Promise<FloorRounds> {
  const stack = await startFloorStack({ post: opts.post });
  const { db, client, taskQueue, eager } = stack;
  await col(db, 'events').createIndex({ account_id: 1, timestamp: 1 });
  await col(db, 'endpoints').createIndex({ account_id: 1 });
  await col(db, 'endpoints').insertOne({ _id: 'we_floor', account_id: ACCOUNT, url: opts.endpointUrl, secret: `whsec_${'ef'.repeat(32)}`, subscriptions: ['*'], status: 'enabled' });
  let written = 0;
  const deliver = async (count: number) => {
    const receivedBefore = opts.received();
    await pool(
      Array.from({ length: count }, (_, i) => written + i),
      opts.writers,
      async (i) => {
        const endpoints = await col(db, 'endpoints').find({ account_id: ACCOUNT }).toArray();
        const event = { _id: `evt_${randomBytes(12).toString('hex')}`, account_id: ACCOUNT, type: 'customer.updated', data: { id: `cust_floor${i}`, object: 'customer', email: `f${i}@example.com` }, timestamp: new Date(), dispatched: endpoints.length === 0 };
        await col(db, 'events').insertOne(event);
        for (const endpoint of endpoints) {
          await client.workflow.start(floorDeliveryWorkflow, { workflowId: `floor-delivery-${event._id}-${endpoint._id}`, taskQueue, args: [event._id, endpoint._id], requestEagerStart: eager });
        }
        // Marked dispatched once its deliveries are started (else a sweeper starts them).
        if (endpoints.length) await col(db, 'events').updateOne({ _id: event._id }, { $set: { dispatched: true } });
      },
    );
    written += count;
    await until("the floor's deliveries", async () => opts.received() - receivedBefore >= count, 250);
  };
  try {
    await deliver(100); // warm-up
  } catch (err) {
    await stack.close();
    throw err;
  }
  return {
    run: deliver,
    // Each delivery's record is written after its POST: done before the next round starts.
    settle: async () => {
      await until("the floor's delivery records", async () => (await col(db, 'deliveries').countDocuments({})) >= written, 250);
    },
    result: (sum, baseline) => floorResult('delivery', 6, sum.operations, sum.cpu, sum.seconds, baseline, 'deliveries (driver statements, one delivery workflow each, the signed HTTPS POST)'),
    close: () => stack.close(),
  };
}

/**
 * The goal an operation is held to: half of the first run's ratio, or, when the floor measured in
 * this run lies above that, the floor plus 20% (issue 27).
 */
export function goalWithFloor(halfOfFirstRun: number, floor: Floor, baseline: InsertBaseline): { ratio: number; label: string; why: string } {
  const floorRatio = floor.ms / baseline.cpuMs;
  if (floorRatio <= halfOfFirstRun) return { ratio: halfOfFirstRun, label: 'half the first run', why: `half of the first run's ratio; the floor x${floorRatio.toFixed(1)} lies below it` };
  return { ratio: floorRatio * 1.2, label: `the floor x${floorRatio.toFixed(1)} + 20%`, why: `the floor x${floorRatio.toFixed(1)} plus 20%, as it lies above half of the first run's ratio (x${halfOfFirstRun.toFixed(1)})` };
}
