/**
 * Writes keep answering 2xx while Temporal is down, and every workflow they asked for is started
 * once it is back (the workflow-start outbox, services/writes/workflowStarts.ts). This file runs its own
 * Temporal dev server, stops it, creates an invoice, a subscription, a payment claim link and a
 * manual crypto transaction through the API, starts the server again with a worker, and sees the
 * sweepers start the due-date, subscription and link workflows (from their intents) and the
 * allocation workflow (from the transaction still due), and the transaction allocated to the invoice.
 */
import { Client, Connection } from '@temporalio/client';
import { grpcConnectionOptions } from '../../src/temporal/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { OwnDevServer } from '../support/devServer';
import { workflowsPath } from '../support/workflows';
import { waitFor } from '../support/wait';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { createActivities } from '../../src/activities';
import type { Dependencies } from '../../src/dependencies';
import { testDependencies } from '../support/dependencies';
import { workflowIds } from '../../src/temporal/workflowIds';
import { startWorkflowStartsDomain } from '../../src/startup/domains/workflowStarts';
import { START_DEADLINE_MS, sweepWorkflowStarts } from '../../src/services/writes/workflowStarts';
import { WorkflowStart } from '../../src/models/workflowStart';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';
import { overdueAt } from '../../src/billing/dueDate';
import { temporal as proto } from '@temporalio/proto';

const { EventType } = proto.api.enums.v1;

useTestDatabase();
const TASK_QUEUE = 'workflow-starts-test';

let server: OwnDevServer;
let connection: Connection;
let client: Client;
/** The API's, the sweeper's and the worker's: this file's client (one outbox). */
let deps: Dependencies;
let nativeConnection: NativeConnection | null = null;
let worker: Worker | null = null;
let workerRun: Promise<void> | null = null;
let stopSweeper: () => Promise<void>;
let api: TestApi;

async function startWorker(): Promise<void> {
  nativeConnection = await NativeConnection.connect({ address: server.address });
  worker = await Worker.create({ connection: nativeConnection, taskQueue: TASK_QUEUE, workflowsPath, activities: createActivities(deps) });
  workerRun = worker.run();
}

async function stopWorker(): Promise<void> {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await workerRun?.catch(() => undefined);
  await nativeConnection?.close().catch(() => undefined);
  worker = null;
}

beforeAll(async () => {
  server = await OwnDevServer.create('workflow-starts');
  await server.start();
  connection = await Connection.connect(grpcConnectionOptions({ address: server.address }));
  client = new Client({ connection, namespace: 'default' });
  await waitFor(() => connection.workflowService.getSystemInfo({}).then(() => true, () => false), 'Temporal to answer', 60_000);
  // The app's domains without Temporal, its workflow clients on this file's client, and a fast sweeper.
  deps = testDependencies({ temporal: { client, taskQueue: TASK_QUEUE } });
  api = await startTestApi({ workflows: deps.workflows }, {}, null);
  stopSweeper = await startWorkflowStartsDomain(deps, { intervalMs: 500, minAgeMs: 1_000, allocationMinAgeMs: 1_000 });
});

afterAll(async () => {
  await stopSweeper?.();
  await stopWorker();
  await connection?.close().catch(() => undefined);
  await server?.stop();
  await api?.close();
});

/** A request's status and how long it took. */
async function timed<T extends { status: number }>(send: () => Promise<T>): Promise<T & { ms: number }> {
  const started = Date.now();
  const res = await send();
  return { ...res, ms: Date.now() - started };
}

describe('workflow starts while Temporal is down', () => {
  it('answers 2xx, records the starts, and starts every workflow once Temporal is back', async () => {
    const a = await newAccount(api.url);
    const { customer, wallet } = await customerWithWallet(a.api);
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
    const monthly = (await a.api.post('/v1/prices', { product_id: product.id, amount: 1000, recurring: { interval: 'month', interval_count: 1 } })).body;
    const oneTime = (await a.api.post('/v1/prices', { product_id: product.id, amount: 100 })).body;
    const subscriber = (await a.api.post('/v1/customers', { email: 'subscriber@x.io' })).body;

    await server.stop();

    // Each write answers 2xx within one start deadline (the first finds Temporal gone; the ones
    // right after it leave their start to the sweeper at once).
    const bound = START_DEADLINE_MS + 5_000;
    const invoice = await timed(() => a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2030-01-01', line_items: [{ price_id: oneTime.id, amount: '100.00' }] }));
    const subscription = await timed(() => a.api.post('/v1/subscriptions', { customer_id: subscriber.id, phases: [{ start_date: '2030-01-01', items: [{ price_id: monthly.id }] }] }));
    const link = await timed(() => a.api.post('/v1/payment_claim_links', { customer_id: customer.id }));
    const tx = await timed(() => a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() }));
    for (const res of [invoice, subscription, link, tx]) {
      expect(res.status).toBe(201);
      expect(res.ms).toBeLessThan(bound);
    }

    const recorded = [workflowIds.invoiceDue(invoice.body.id), workflowIds.subscription(subscription.body.id), workflowIds.claimLink(link.body.id)];
    const expected = [...recorded, workflowIds.allocation(customer.id)];
    // Recorded, not started; a sweep while Temporal is down changes nothing.
    await expect(sweepWorkflowStarts(deps.workflows.outbox!, { minAgeMs: 0, batch: 10 })).rejects.toThrow();
    const waiting = await WorkflowStart.find({ workflow_id: { $in: expected } }).lean();
    expect(waiting.map((w) => w.workflow_id).sort()).toEqual([...recorded].sort());
    expect(waiting.every((w) => w.started === false)).toBe(true);
    // The transaction is its own allocation intent: still due, and no intent document for it.
    expect(await CryptoTransaction.findById(tx.body.id).lean()).toMatchObject({ allocation_due: true, allocated_at: null });
    await expect(deps.workflows.allocation.sweep({ minAgeMs: 0, batch: 10 })).rejects.toThrow();

    await server.start();
    await startWorker();
    for (const id of expected) {
      await waitFor(() => client.workflow.getHandle(id).describe().then(() => true, () => false), `workflow ${id}`, 90_000);
    }
    await waitFor(async () => (await WorkflowStart.countDocuments({ workflow_id: { $in: expected }, started: false })) === 0, 'every intent marked started', 30_000);

    // The allocation ran: the transaction paid the invoice.
    const allocated = await waitFor(async () => {
      const got = (await a.api.get(`/v1/crypto_transactions/${tx.body.id}`)).body;
      return got.allocations.length > 0 ? got : null;
    }, 'the allocation', 60_000);
    expect(allocated.allocations).toEqual([expect.objectContaining({ invoice_id: invoice.body.id, amount_applied: '100.00' })]);
    expect(await CryptoTransaction.findById(tx.body.id).lean()).toMatchObject({ allocation_due: false });
    expect((await a.api.get(`/v1/invoices/${invoice.body.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    // The subscription workflow runs (its first phase is in the future) and the link waits for its expiry.
    expect((await client.workflow.getHandle(workflowIds.subscription(subscription.body.id)).describe()).status.name).toBe('RUNNING');
    expect((await client.workflow.getHandle(workflowIds.claimLink(link.body.id)).describe()).status.name).toBe('RUNNING');
  });

  it('starts at once while Temporal is up, and drops an intent whose document was never written', async () => {
    // The outage above may leave this process's pause running (a start that failed while the
    // server came back up); this test is about a process that finds Temporal up.
    await waitFor(async () => deps.workflows.outbox!.pausedUntil <= Date.now(), 'the pause after the outage to end', 20_000);
    const a = await newAccount(api.url);
    const customer = (await a.api.post('/v1/customers', { email: 'up@x.io' })).body;
    const invoice = await invoiceOf(a.api, customer.id, '5.00', '2030-02-01');
    const intent = await WorkflowStart.findById(workflowIds.invoiceDue(invoice.id)).lean();
    expect(intent).toMatchObject({ started: true });
    const due = client.workflow.getHandle(workflowIds.invoiceDue(invoice.id));
    expect((await due.describe()).status.name).toBe('RUNNING');
    // Its first task waits for the end of the due date: until then, no workflow task at all.
    const { events } = await due.fetchHistory();
    expect(events?.map((e) => e.eventType)).toEqual([EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED]);
    const backoff = events![0].workflowExecutionStartedEventAttributes!.firstWorkflowTaskBackoff!;
    const wakesAt = Date.now() + Number(backoff.seconds) * 1000;
    expect(Math.abs(wakesAt - overdueAt('2030-02-01'))).toBeLessThan(60_000);

    // An intent recorded ahead of a write that failed: nothing is started, and after a minute it goes.
    const old = new Date(Date.now() - 61_000);
    await WorkflowStart.collection.insertOne({
      _id: 'invoice-due-inv_never_written', workflow_id: 'invoice-due-inv_never_written', workflow_type: 'invoiceDueWorkflow', task_queue: TASK_QUEUE,
      args: [{ invoiceId: 'inv_never_written', dueDate: '2030-01-01' }], signal: null, signal_args: null,
      resource_collection: 'invoices', resource_id: 'inv_never_written', nonce: 'n', started: false, started_at: null,
      attempts: 0, last_error: null, next_attempt_at: old, created_at: old,
    } as never);
    await waitFor(async () => (await WorkflowStart.countDocuments({ _id: 'invoice-due-inv_never_written' })) === 0, 'the orphan intent to go', 30_000);
    await expect(client.workflow.getHandle('invoice-due-inv_never_written').describe()).rejects.toThrow();
  });
});
