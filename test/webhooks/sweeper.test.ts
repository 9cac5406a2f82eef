/**
 * "Event written" to "workflow started" survives Temporal being down: this test runs its own
 * Temporal dev server (state in a file, so it survives a restart), stops it, writes events,
 * starts it again, and sees each event delivered exactly once by the sweeper. It also runs the
 * retention Schedule the webhooks domain creates.
 */
import https from 'node:https';
import { grpcConnectionOptions } from '../../src/temporal/client';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { HttpsReceiver, makeTestCertificates, startHttpsReceiver } from '../support/httpsReceiver';
import { OwnDevServer } from '../support/devServer';
import { workflowsPath } from '../support/workflows';
import { waitFor } from './helpers';
import { loadConfig } from '../../src/config';
import { testDependencies } from '../support/dependencies';
import { workflowIds } from '../../src/temporal/workflowIds';
import { RETENTION_SCHEDULE_ID } from '../../src/temporal/webhookDefinitions';
import { startWebhooksDomain } from '../../src/startup/domains/webhooks';
import { ensureRetentionSchedule } from '../../src/temporal/clients/webhookRetention';
import { createWebhooksActivities } from '../../src/activities/webhooks';
import { Event } from '../../src/models/event';
import { WebhookDelivery } from '../../src/models/webhookDelivery';
import { IdempotencyKey } from '../../src/models/idempotencyKey';

useTestDatabase();
const TASK_QUEUE = 'webhooks-sweeper-test';
const DAY = 24 * 3600e3;

let server: OwnDevServer;

let connection: Connection;
let client: Client;
let nativeConnection: NativeConnection;
let worker: Worker;
let workerRun: Promise<void>;
let stopDomain: () => Promise<void>;
let startWorker: () => Promise<void>;

async function stopWorker(): Promise<void> {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await workerRun?.catch(() => undefined);
  await nativeConnection?.close().catch(() => undefined);
}
let receiver: HttpsReceiver;
let api: TestApi;
const warnings: { msg: string; eventId?: string }[] = [];

beforeAll(async () => {
  server = await OwnDevServer.create('webhook-sweeper');
  await server.start();
  connection = await Connection.connect(grpcConnectionOptions({ address: server.address }));
  client = new Client({ connection, namespace: 'default' });
  await waitFor(() => connection.workflowService.getSystemInfo({}).then(() => true, () => false), 'Temporal to answer', 60_000);
  const certs = makeTestCertificates();
  receiver = await startHttpsReceiver(certs);
  const config = { ...loadConfig({ ...process.env, LOG_LEVEL: 'silent' }), webhookAllowPrivateNetworks: true };
  // Its warnings are this file's signals that dispatch tried and failed (Temporal down).
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
  const deps = testDependencies({ config, logger, temporal: { client, taskQueue: TASK_QUEUE } });
  startWorker = async () => {
    nativeConnection = await NativeConnection.connect({ address: server.address });
    worker = await Worker.create({
      connection: nativeConnection,
      taskQueue: TASK_QUEUE,
      workflowsPath,
      activities: createWebhooksActivities({ ...deps, httpsAgent: new https.Agent({ ca: certs.ca, keepAlive: true }) }),
    });
    workerRun = worker.run();
  };
  await startWorker();
  // The app first (its domains without Temporal, its workflow clients on this file's), then this file's own dispatch with fast sweeps.
  api = await startTestApi({ workflows: deps.workflows }, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, null);
  stopDomain = await startWebhooksDomain(deps, { intervalMs: 500, minAgeMs: 1_000 });
});

afterAll(async () => {
  await stopDomain?.();
  await stopWorker();
  await connection?.close().catch(() => undefined);
  await server?.stop();
  await receiver?.close();
  await api?.close();
});

describe('webhook dispatch when Temporal is down', () => {
  it('starts the deliveries of events written while Temporal was down, each exactly once', async () => {
    const a = await newAccount(api.url);
    const endpoint = (await a.api.post('/v1/webhook_endpoints', { url: `${receiver.url}/sweep`, subscriptions: ['customer.created'] })).body;
    await a.api.post('/v1/customers', { email: 'before@example.com' });
    await waitFor(() => receiver.requestsTo('/sweep').length === 1, 'the first delivery', 30_000);

    // The worker goes too (its pollers would only log the outage); what is tested is dispatch.
    await stopWorker();
    await server.stop();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await a.api.post('/v1/customers', { email: `down${i}@example.com` });
      expect(c.status).toBe(201); // the API does not wait for Temporal
      ids.push((await Event.findOne({ event: 'customer.created', 'payload.id': c.body.id }).lean())!._id as string);
    }
    // The listener's starts fail within their deadline (it gives up on each event), then a
    // sweeper pass fails too; the events stay undispatched.
    await waitFor(() => ids.every((id) => warnings.some((w) => w.msg === 'webhook dispatch failed; the sweeper will retry' && w.eventId === id)), 'the listener to give up', 60_000);
    const seen = warnings.length;
    await waitFor(() => warnings.slice(seen).some((w) => w.msg === 'webhook sweeper pass failed; will retry'), 'a failed sweeper pass', 60_000);
    const pending = await Event.find({ _id: { $in: ids } }).lean();
    expect(pending.map((e) => e.dispatched_at)).toEqual([null, null, null]);
    expect(receiver.requestsTo('/sweep')).toHaveLength(1);

    await server.start();
    await startWorker();
    await waitFor(() => receiver.requestsTo('/sweep').length >= 4, 'the deliveries after Temporal came back', 90_000);
    // More sweeper passes: nothing is delivered twice. The signal that they ran: a later event
    // left for the sweeper alone (written undispatched, older than its minimum age) is delivered.
    await Event.collection.insertOne({
      _id: 'evt_sweep_marker', account_id: a.account_id, sandbox: null, event: 'customer.created',
      payload: { id: 'cus_sweep_marker', object: 'customer' }, timestamp: new Date(Date.now() - 2_000), dispatched: false, dispatched_at: null,
    } as never);
    await waitFor(() => receiver.requestsTo('/sweep').some((r) => r.headers['x-service-event-id'] === 'evt_sweep_marker'), 'the marker event delivered by a sweep', 60_000);
    const got = receiver.requestsTo('/sweep').map((r) => r.headers['x-service-event-id'] as string).filter((id) => id !== 'evt_sweep_marker');
    expect(got).toHaveLength(4);
    expect(new Set(got).size).toBe(4);
    expect(got.slice(1).sort()).toEqual([...ids].sort());
    const after = await Event.find({ _id: { $in: ids } }).lean();
    expect(after.every((e) => e.dispatched_at instanceof Date)).toBe(true);
    for (const id of ids) {
      const d = await WebhookDelivery.findById(workflowIds.webhookDelivery(id, endpoint.id)).lean();
      expect(d).toMatchObject({ status: 'succeeded' });
      expect(d!.attempts).toHaveLength(1);
    }
  });

  it('creates the retention Schedule idempotently, and its run purges expired records', async () => {
    const handle = client.schedule.getHandle(RETENTION_SCHEDULE_ID);
    await waitFor(() => handle.describe().then(() => true, () => false), 'the retention schedule', 30_000);
    await ensureRetentionSchedule({ client, taskQueue: TASK_QUEUE });
    // A dev server busy with the other test files can answer one describe with DEADLINE_EXCEEDED.
    const desc = await waitFor(() => handle.describe().catch(() => null), 'the retention schedule again', 30_000);
    expect(desc.action).toMatchObject({ type: 'startWorkflow', workflowType: 'webhookRetentionWorkflow' });

    const now = Date.now();
    const base = { account_id: 'acct_retention', sandbox: null, event: 'customer.created', payload: { id: 'cust_x', object: 'customer' } };
    await Event.create([
      { ...base, _id: 'evt_old_retention', timestamp: new Date(now - 31 * DAY), dispatched_at: new Date() },
      { ...base, _id: 'evt_new_retention', timestamp: new Date(now - 29 * DAY), dispatched_at: new Date() },
    ]);
    const delivery = { account_id: 'acct_retention', sandbox: null, endpoint_id: 'we_x', event: 'customer.created', status: 'succeeded' };
    await WebhookDelivery.collection.insertMany([
      { ...delivery, _id: 'whd-old', event_id: 'evt_old_retention', created_at: new Date(now - 31 * DAY), attempts: [] },
      { ...delivery, _id: 'whd-new', event_id: 'evt_new_retention', created_at: new Date(now - 29 * DAY), attempts: [] },
    ] as never[]);
    await IdempotencyKey.create([
      { _id: 'idem-old', request_hash: 'h', state: 'done', created_at: new Date(now - 25 * 3600e3) },
      { _id: 'idem-new', request_hash: 'h', state: 'done', created_at: new Date(now - 23 * 3600e3) },
    ]);

    await handle.trigger();
    await waitFor(async () => (await Event.countDocuments({ _id: 'evt_old_retention' })) === 0, 'the purge', 60_000);
    await waitFor(async () => (await IdempotencyKey.countDocuments({ _id: 'idem-old' })) === 0, 'the key purge', 30_000);
    expect(await WebhookDelivery.countDocuments({ _id: 'whd-old' })).toBe(0);
    expect(await Event.countDocuments({ _id: 'evt_new_retention' })).toBe(1);
    expect(await WebhookDelivery.countDocuments({ _id: 'whd-new' })).toBe(1);
    expect(await IdempotencyKey.countDocuments({ _id: 'idem-new' })).toBe(1);
  });
});
