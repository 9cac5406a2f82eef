/**
 * Delivery end to end on the time-skipping test server: the real API records events, the
 * webhooks domain starts one workflow per (event, endpoint), a worker in this test runs the
 * real workflows and activities, and a real HTTPS receiver (test CA) answers.
 */
import https from 'node:https';
import pino from 'pino';
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { tsToMs } from '@temporalio/common/lib/time';
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { timeSkippingEnvironment } from '../support/temporal';
import { closedPort, HttpsReceiver, makeTestCertificates, startHttpsReceiver, TestCertificates } from '../support/httpsReceiver';
import { fixtureHistory, recordHistory, workflowsPath } from '../support/workflows';
import { signatureValid, sleep, waitFor } from './helpers';
import { loadConfig } from '../../src/config';
import { testDependencies } from '../support/dependencies';
import { workflowIds } from '../../src/temporal/workflowIds';
import { BACKOFF_MS, JITTER, MAX_ATTEMPTS } from '../../src/temporal/webhookDefinitions';
import { startWebhooksDomain } from '../../src/startup/domains/webhooks';
import { createWebhooksActivities } from '../../src/activities/webhooks';
import { newDeliveryRecord } from '../../src/services/webhooks/webhookDispatch';
import { sweepUndispatchedEvents } from '../../src/services/webhooks/webhookSweeper';
import { WebhookEndpoint, WebhookEndpointDoc } from '../../src/models/webhookEndpoint';
import { Event } from '../../src/models/event';
import { WebhookDelivery } from '../../src/models/webhookDelivery';

useTestDatabase();
const TASK_QUEUE = 'webhooks-delivery-test';
// Kept histories (test/workflows/histories, read-only), replayed below.
/** Attempts as local activities by the run's input (recorded by the code of that change). */
const INPUT_HISTORY = 'webhookDelivery-local-attempts-by-input';
/** Attempts as local activities by a patch marker (and its search-attribute upsert): runs started then must still replay. */
const PATCHED_HISTORY = 'webhookDelivery-local-attempts';
/** Recorded before attempts became local activities: runs started then must still replay. */
const ACTIVITY_HISTORY = 'webhookDelivery-10-failures';

let env: TestWorkflowEnvironment;
let worker: Worker;
let workerRun: Promise<void>;
let api: TestApi;
let certs: TestCertificates;
let receiver: HttpsReceiver;
let stopDomain: () => Promise<void>;

beforeAll(async () => {
  certs = makeTestCertificates();
  receiver = await startHttpsReceiver(certs);
  env = await timeSkippingEnvironment();
  const config = { ...loadConfig({ ...process.env, LOG_LEVEL: 'silent' }), webhookAllowPrivateNetworks: true };
  const logger = pino({ level: 'silent' });
  const temporal = { client: env.client, taskQueue: TASK_QUEUE };
  // The app first (its domains without Temporal, its workflow clients on this file's), then this file's own dispatch with fast sweeps.
  const deps = testDependencies({ config, logger, temporal });
  api = await startTestApi({ workflows: deps.workflows }, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, null);
  stopDomain = await startWebhooksDomain(deps, { retentionSchedule: false, intervalMs: 1_000, minAgeMs: 3_000 });
  worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: TASK_QUEUE,
    workflowsPath,
    activities: createWebhooksActivities({ ...deps, httpsAgent: new https.Agent({ ca: certs.ca, keepAlive: true }), deliveryTimeoutMs: 3_000 }),
  });
  workerRun = worker.run();
});

afterAll(async () => {
  await stopDomain?.();
  worker?.shutdown();
  await workerRun?.catch(() => undefined);
  await env?.teardown();
  await receiver?.close();
  await api?.close();
});

let recorded: Awaited<ReturnType<typeof recordHistory>> | undefined;
let seq = 0;
async function endpointFor(a: Awaited<ReturnType<typeof newAccount>>, subscriptions: string[] = ['customer.created'], base = receiver.url) {
  seq += 1;
  const hookPath = `/hook-${seq}`;
  const res = await a.api.post('/v1/webhook_endpoints', { url: base + hookPath, subscriptions });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return { endpoint: res.body as { id: string; signing_secret: string }, hookPath };
}

async function createCustomer(a: Awaited<ReturnType<typeof newAccount>>): Promise<string> {
  const c = await a.api.post('/v1/customers', { email: `c${++seq}@example.com` });
  expect(c.status).toBe(201);
  const ev = await Event.findOne({ account_id: a.account_id, event: 'customer.created', 'payload.id': c.body.id }).lean();
  return ev!._id as string;
}

async function handleOf(workflowId: string) {
  const handle = env.client.workflow.getHandle(workflowId);
  await waitFor(() => handle.describe().then(() => true, () => false), `workflow ${workflowId}`);
  return handle;
}

function deliveryHandle(eventId: string, endpointId: string) {
  return handleOf(workflowIds.webhookDelivery(eventId, endpointId));
}

describe('webhook delivery (time skipping)', () => {
  it('retries a receiver failing 10 times: exactly 11 signed attempts with the scheduled gaps', async () => {
    const a = await newAccount(api.url);
    const { endpoint, hookPath } = await endpointFor(a);
    receiver.route(hookPath, (_req, n) => (n < 10 ? { status: 500, body: `fail ${n + 1}` } : { status: 200, body: 'x'.repeat(3000) }));
    const eventId = await createCustomer(a);
    const handle = await deliveryHandle(eventId, endpoint.id);
    expect(await handle.result()).toBe('succeeded');

    const got = receiver.requestsTo(hookPath);
    expect(got).toHaveLength(11);
    for (const r of got) {
      expect(r.headers['x-service-event-id']).toBe(eventId);
      expect(r.headers['content-type']).toBe('application/json');
      expect(signatureValid(r.body, r.headers['x-service-signature'], endpoint.signing_secret)).toBe(true);
      const body = JSON.parse(r.body);
      expect(Object.keys(body)).toEqual(['id', 'event', 'payload', 'timestamp']);
      expect(body).toMatchObject({ id: eventId, event: 'customer.created', payload: { object: 'customer' } });
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }

    // The gaps are the workflow's durable timers: 5s, 30s, 2m, ... each within the jitter.
    const history = await handle.fetchHistory();
    const timers = history.events!.filter((e) => e.timerStartedEventAttributes).map((e) => tsToMs(e.timerStartedEventAttributes!.startToFireTimeout));
    expect(timers).toHaveLength(10);
    timers.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(BACKOFF_MS[i] * (1 - JITTER));
      expect(ms).toBeLessThan(BACKOFF_MS[i] * (1 + JITTER));
    });
    // ...and the attempts were scheduled that far apart in workflow time.
    // (Each attempt is a local activity: its marker is written when the attempt's workflow task completes.)
    const scheduled = history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').map((e) => tsToMs(e.eventTime));
    expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
    expect(scheduled).toHaveLength(11);
    // Local by its input: no patch marker, so no TemporalChangeVersion upsert (a visibility write) either.
    expect(history.events!.filter((e) => e.markerRecordedEventAttributes && e.markerRecordedEventAttributes.markerName !== 'core_local_activity')).toEqual([]);
    expect(history.events!.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toEqual([]);
    for (let i = 1; i < scheduled.length; i++) expect(scheduled[i] - scheduled[i - 1]).toBeGreaterThanOrEqual(timers[i - 1]);
    // For the replay test below (written to a file of its own in test-artifacts/histories, never a kept one).
    recorded = recordHistory('webhookDelivery-10-failures-current', history);

    // Every attempt is in the endpoint's log.
    const log = await a.api.get(`/v1/webhook_endpoints/${endpoint.id}/events`);
    expect(log.status).toBe(200);
    expect(log.body.pagination).toEqual({ page: 1, pages: 1, count: 1 });
    const delivery = log.body.webhook_events[0];
    expect(delivery).toMatchObject({ event_id: eventId, event: 'customer.created', status: 'succeeded', attempt_count: 11, redelivery: false, next_attempt_at: null });
    expect(delivery.payload).toMatchObject({ object: 'customer' });
    expect(delivery.attempts.map((x: any) => x.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(delivery.attempts.map((x: any) => x.status_code)).toEqual([...Array(10).fill(500), 200]);
    expect(delivery.attempts[0]).toMatchObject({ error: null, response_body: 'fail 1' });
    expect(delivery.attempts[10].response_body).toHaveLength(1024);
    for (const x of delivery.attempts) {
      expect(x.latency_ms).toBeGreaterThanOrEqual(0);
      expect(x.attempted_at).toMatch(/Z$/);
    }
  });

  it('replays the recorded delivery history deterministically', async () => {
    expect(recorded).toBeDefined();
    expect(recorded!.events!.length).toBeGreaterThan(20);
    await Worker.runReplayHistory({ workflowsPath }, recorded!, 'replayed-delivery');
    const kept = fixtureHistory(INPUT_HISTORY);
    expect(kept.events!.length).toBeGreaterThan(20);
    await Worker.runReplayHistory({ workflowsPath }, kept, 'replayed-input-delivery');
  });

  it('still replays a delivery whose run chose local attempts by a patch marker', async () => {
    const recorded = fixtureHistory(PATCHED_HISTORY);
    expect(recorded.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toHaveLength(1);
    expect(recorded.events!.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toHaveLength(1);
    await Worker.runReplayHistory({ workflowsPath }, recorded, 'replayed-patched-delivery');
  });

  it('still replays a delivery recorded when attempts were regular activities', async () => {
    const recorded = fixtureHistory(ACTIVITY_HISTORY);
    expect(recorded.events!.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(11);
    await Worker.runReplayHistory({ workflowsPath }, recorded, 'replayed-activity-delivery');
  });

  it('stops after 11 attempts against a receiver that always fails', async () => {
    const a = await newAccount(api.url);
    const { endpoint, hookPath } = await endpointFor(a);
    receiver.route(hookPath, () => ({ status: 503, body: 'down' }));
    const eventId = await createCustomer(a);
    const handle = await deliveryHandle(eventId, endpoint.id);
    expect(await handle.result()).toBe('failed');
    expect(receiver.requestsTo(hookPath)).toHaveLength(MAX_ATTEMPTS);
    const d = await WebhookDelivery.findById(handle.workflowId).lean();
    expect(d).toMatchObject({ status: 'failed', ended_reason: 'attempts_exhausted' });
    expect(d!.attempts).toHaveLength(11);
    expect((await a.api.get(`/v1/webhook_endpoints/${endpoint.id}`)).body.enabled).toBe(true);
  });

  it('retries TLS errors (an untrusted certificate) like non-2xx answers', async () => {
    const other = await startHttpsReceiver(makeTestCertificates());
    try {
      const a = await newAccount(api.url);
      const { endpoint, hookPath } = await endpointFor(a, ['customer.created'], other.url);
      const eventId = await createCustomer(a);
      const handle = await deliveryHandle(eventId, endpoint.id);
      expect(await handle.result()).toBe('failed');
      expect(other.requestsTo(hookPath)).toHaveLength(0);
      const d = await WebhookDelivery.findById(handle.workflowId).lean();
      expect(d!.attempts).toHaveLength(11);
      expect(d!.attempts.every((x) => x!.error === 'tls_error' && x!.status_code === null)).toBe(true);
      expect((await a.api.get(`/v1/webhook_endpoints/${endpoint.id}`)).body.enabled).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('disables the endpoint after one attempt when the connection is refused', async () => {
    const a = await newAccount(api.url);
    const port = await closedPort();
    const { endpoint } = await endpointFor(a, ['customer.created'], `https://127.0.0.1:${port}`);
    const eventId = await createCustomer(a);
    const handle = await deliveryHandle(eventId, endpoint.id);
    expect(await handle.result()).toBe('endpoint_disabled');
    const d = await WebhookDelivery.findById(handle.workflowId).lean();
    expect(d).toMatchObject({ status: 'failed', ended_reason: 'endpoint_disabled' });
    expect(d!.attempts).toHaveLength(1);
    expect(d!.attempts[0]).toMatchObject({ attempt: 1, error: 'connection_error', error_detail: 'ECONNREFUSED', status_code: null });
    expect((await a.api.get(`/v1/webhook_endpoints/${endpoint.id}`)).body).toMatchObject({ enabled: false, disabled_reason: 'connection_error' });
    // A disabled endpoint gets no new deliveries. An enabled endpoint of the same account gets
    // the same event: once its delivery has run and the event is marked dispatched, the dispatch
    // (which starts every recipient's workflow before marking) is over, and none was started here.
    const { endpoint: enabled } = await endpointFor(a);
    const second = await createCustomer(a);
    expect(await (await deliveryHandle(second, enabled.id)).result()).toBe('succeeded');
    await waitFor(async () => (await Event.findById(second).lean())?.dispatched, 'the event marked dispatched');
    const notStarted = await env.client.workflow.getHandle(workflowIds.webhookDelivery(second, endpoint.id)).describe().then(() => 'started', (err: Error) => err.name);
    expect(notStarted).toBe('WorkflowNotFoundError');
    expect(await WebhookDelivery.findById(workflowIds.webhookDelivery(second, endpoint.id)).lean()).toBeNull();
  });

  it('signs the attempt after a secret rotation with the new secret', async () => {
    const a = await newAccount(api.url);
    const { endpoint, hookPath } = await endpointFor(a);
    let newSecret = '';
    receiver.route(hookPath, async (_req, n) => {
      if (n === 0) {
        newSecret = (await a.api.post(`/v1/webhook_endpoints/${endpoint.id}/regenerate_secret`)).body.signing_secret;
        return { status: 500 };
      }
      return { status: 204 };
    });
    const eventId = await createCustomer(a);
    const handle = await deliveryHandle(eventId, endpoint.id);
    expect(await handle.result()).toBe('succeeded');
    const [first, second] = receiver.requestsTo(hookPath);
    expect(newSecret).toMatch(/^whsec_/);
    expect(signatureValid(first.body, first.headers['x-service-signature'], endpoint.signing_secret)).toBe(true);
    expect(signatureValid(second.body, second.headers['x-service-signature'], newSecret)).toBe(true);
    expect(signatureValid(second.body, second.headers['x-service-signature'], endpoint.signing_secret)).toBe(false);
  });

  it('ends a waiting delivery when its endpoint is disabled, and one when it is deleted', async () => {
    const a = await newAccount(api.url);
    const { endpoint, hookPath } = await endpointFor(a);
    receiver.route(hookPath, async () => {
      await a.api.put(`/v1/webhook_endpoints/${endpoint.id}`, { enabled: false });
      return { status: 500 };
    });
    const eventId = await createCustomer(a);
    const handle = await deliveryHandle(eventId, endpoint.id);
    expect(await handle.result()).toBe('stopped');
    expect(receiver.requestsTo(hookPath)).toHaveLength(1);
    expect(await WebhookDelivery.findById(handle.workflowId).lean()).toMatchObject({ status: 'canceled', ended_reason: 'endpoint_disabled' });

    const b = await newAccount(api.url);
    const second = await endpointFor(b);
    receiver.route(second.hookPath, async () => {
      await b.api.del(`/v1/webhook_endpoints/${second.endpoint.id}`);
      return { status: 500 };
    });
    const eventB = await createCustomer(b);
    const handleB = await deliveryHandle(eventB, second.endpoint.id);
    expect(await handleB.result()).toBe('stopped');
    expect(receiver.requestsTo(second.hookPath)).toHaveLength(1);
    expect(await WebhookDelivery.countDocuments({ endpoint_id: second.endpoint.id })).toBe(0);
  });

  it('refuses a delivery, started directly on Temporal, of an event of another account or scope: no request, no record for the other account', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    const { endpoint: foreign, hookPath } = await endpointFor(b, ['*']);
    seq += 1;
    const sandboxPath = `/hook-${seq}`;
    const sandboxEndpoint = (await a.sandbox.post('/v1/webhook_endpoints', { url: receiver.url + sandboxPath, subscriptions: ['*'] })).body;
    const eventId = await createCustomer(a);
    const forged = (endpointId: string, deliveryId: string) =>
      env.client.workflow.execute('webhookDeliveryWorkflow', { taskQueue: TASK_QUEUE, workflowId: deliveryId, args: [{ deliveryId, eventId, endpointId }] });
    expect(await forged(foreign.id, `forged-${foreign.id}`)).toBe('stopped');
    expect(await forged(sandboxEndpoint.id, `forged-${sandboxEndpoint.id}`)).toBe('stopped');
    expect(await WebhookDelivery.countDocuments({ _id: { $in: [`forged-${foreign.id}`, `forged-${sandboxEndpoint.id}`] } })).toBe(0);
    // A record made ahead of the workflow (as a redelivery does) is ended as failed, with the reason.
    const endpointDoc = (await WebhookEndpoint.findById(foreign.id).lean<WebhookEndpointDoc>())!;
    await WebhookDelivery.collection.insertOne(newDeliveryRecord({ deliveryId: `forged-redelivery-${foreign.id}`, endpoint: endpointDoc, event: { id: eventId, event: 'customer.created' }, redelivery: true }) as never);
    expect(await forged(foreign.id, `forged-redelivery-${foreign.id}`)).toBe('stopped');
    expect(await WebhookDelivery.findById(`forged-redelivery-${foreign.id}`).lean()).toMatchObject({ status: 'failed', ended_reason: 'scope_mismatch', attempts: [] });
    const carrying = (path: string) => receiver.requestsTo(path).filter((r) => r.headers['x-service-event-id'] === eventId);
    expect(carrying(hookPath)).toHaveLength(0);
    expect(carrying(sandboxPath)).toHaveLength(0);
  });

  it('redelivers an event with a new signature, as a new delivery', async () => {
    const a = await newAccount(api.url);
    const { endpoint, hookPath } = await endpointFor(a);
    const eventId = await createCustomer(a);
    expect(await (await deliveryHandle(eventId, endpoint.id)).result()).toBe('succeeded');
    // The signature covers the timestamp (seconds): step into the next second.
    await sleep(1100);
    const res = await a.api.post(`/v1/webhook_endpoints/${endpoint.id}/events/${eventId}/redeliver`);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ event_id: eventId, endpoint_id: endpoint.id, redelivery: true, status: 'pending', attempts: [] });
    expect(res.body.id).not.toBe(workflowIds.webhookDelivery(eventId, endpoint.id));
    expect(await (await handleOf(res.body.id)).result()).toBe('succeeded');

    const [first, again] = receiver.requestsTo(hookPath);
    expect(again.body).toBe(first.body);
    expect(again.headers['x-service-event-id']).toBe(eventId);
    expect(again.headers['x-service-signature']).not.toBe(first.headers['x-service-signature']);
    expect(signatureValid(again.body, again.headers['x-service-signature'], endpoint.signing_secret)).toBe(true);
    const log = (await a.api.get(`/v1/webhook_endpoints/${endpoint.id}/events`)).body;
    expect(log.webhook_events.map((d: any) => [d.redelivery, d.status])).toEqual([[true, 'succeeded'], [false, 'succeeded']]);
  });

  it('delivers every event this project emits to a "*" subscriber exactly once', async () => {
    const a = await newAccount(api.url);
    const { endpoint, hookPath } = await endpointFor(a, ['*']);
    const other = await endpointFor(a, ['price.created']);

    const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
    await a.api.patch(`/v1/products/${product.id}`, { name: 'Plan 2' });
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 500 })).body;
    await a.api.patch(`/v1/prices/${price.id}`, { active: false });
    await a.api.del(`/v1/prices/${price.id}`);
    await a.api.post('/v1/prices', { product_id: product.id, amount: 700 });
    await a.api.del(`/v1/products/${product.id}`);
    const customer = (await a.api.post('/v1/customers', { email: 'all@example.com' })).body;
    await a.api.patch(`/v1/customers/${customer.id}`, { first_name: 'Al' });
    await a.api.del(`/v1/customers/${customer.id}`);
    // A sandbox event does not reach a production endpoint.
    await a.sandbox.post('/v1/customers', { email: 'sandboxed@example.com' });

    const created = new Date((await a.api.get(`/v1/webhook_endpoints/${endpoint.id}`)).body.created_at);
    const events = await Event.find({ account_id: a.account_id, sandbox: null, timestamp: { $gte: created } }).lean();
    const names = new Set(events.map((e) => e.event));
    expect([...names].sort()).toEqual(
      ['customer.created', 'customer.deleted', 'customer.updated', 'price.created', 'price.deleted', 'price.updated',
        'product.created', 'product.deleted', 'product.updated', 'wallet.created'].sort(),
    );
    for (const e of events) expect(await (await deliveryHandle(e._id as string, endpoint.id)).result()).toBe('succeeded');

    // Starting again is refused: a sweep of the same events, made undispatched again, starts no
    // new run (each delivery's latest run is still the one that delivered it), so nothing is sent twice.
    const latestRun = (e: { _id: unknown }) => env.client.workflow.getHandle(workflowIds.webhookDelivery(e._id as string, endpoint.id)).describe().then((d) => d.runId);
    const runs = await Promise.all(events.map(latestRun));
    await Event.updateMany({ _id: { $in: events.map((e) => e._id) } }, { $set: { dispatched: false, dispatched_at: null } });
    // (This file's background sweeper may take some of them first: either way each is marked only after its starts.)
    await sweepUndispatchedEvents({ client: env.client, taskQueue: TASK_QUEUE }, { minAgeMs: 0, batch: 1000 });
    await waitFor(async () => (await Event.countDocuments({ _id: { $in: events.map((e) => e._id) }, dispatched: false })) === 0, 'the events dispatched again');
    expect(await Promise.all(events.map(latestRun))).toEqual(runs);
    const got = receiver.requestsTo(hookPath).map((r) => r.headers['x-service-event-id']);
    expect([...got].sort()).toEqual(events.map((e) => e._id).sort());
    expect(new Set(got).size).toBe(got.length);
    expect(receiver.requestsTo(other.hookPath).map((r) => JSON.parse(r.body).event)).toEqual(['price.created', 'price.created']);
    const undispatched = await Event.countDocuments({ account_id: a.account_id, sandbox: null, dispatched_at: null });
    expect(undispatched).toBe(0);
  });
});
