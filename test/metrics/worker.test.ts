/**
 * The worker's /metrics server with the activities' metrics object: real activities (webhook
 * attempts to a real HTTPS receiver, allocations, a chain scan of a fake Esplora) move the
 * domain counters, and the scrape shows them; the oldest undispatched event's age is read
 * from the events collection at scrape time.
 */
import https from 'node:https';
import pino from 'pino';
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { closedPort, HttpsReceiver, makeTestCertificates, startHttpsReceiver } from '../support/httpsReceiver';
import { FakeEsplora } from '../support/esplora';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { scrape, valueOf } from './prom';
import { loadConfig } from '../../src/config';
import { createActivities } from '../../src/activities';
import { createWebhooksActivities } from '../../src/activities/webhooks';
import { createWorkerMetrics, WorkerMetrics } from '../../src/metrics/worker';
import { MetricsServer, metricsHost, startMetricsServer } from '../../src/metrics/server';
import { oldestUndispatchedEventAt } from '../../src/services/webhooks/webhookSweeper';
import { FixedRateOracle, PriceUnavailableError } from '../../src/services/crypto/priceOracle';
import { SwitchableOracle, testDependencies } from '../support/dependencies';
import { workflowIds } from '../../src/temporal/workflowIds';
import { Event } from '../../src/models/event';

useTestDatabase();
const logger = pino({ level: 'silent' });

let api: TestApi;
let receiver: HttpsReceiver;
let fake: FakeEsplora;
let metrics: WorkerMetrics;
let server: MetricsServer;
let activities: ReturnType<typeof createActivities>;
let url: string;
/** What the API and the activities price with; a test points it elsewhere and back. */
const oracle = new SwitchableOracle();

beforeAll(async () => {
  const certs = makeTestCertificates();
  receiver = await startHttpsReceiver(certs);
  receiver.route('/fail', () => ({ status: 500, body: 'down' }));
  fake = await FakeEsplora.start({ network: 'mainnet' });
  fake.mine(120);
  api = await startTestApi({ priceOracle: oracle }, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', BTC_ESPLORA_URL: fake.url, BTC_CONFIRMATIONS: '2' });
  // As worker.ts does: one metrics object, given to every activity and served by one server.
  metrics = createWorkerMetrics({ oldestUndispatchedEventAt, logger });
  const deps = testDependencies({ config, logger, priceOracle: oracle });
  activities = {
    ...createActivities({ ...deps, metrics }),
    ...createWebhooksActivities({ ...deps, metrics, httpsAgent: new https.Agent({ ca: certs.ca }), deliveryTimeoutMs: 3_000 }),
  };
  server = await startMetricsServer({ register: metrics.register, host: '127.0.0.1', port: 0, token: null, temporalMetricsUrl: null, logger });
  url = `http://127.0.0.1:${server.port}/metrics`;
});
afterAll(async () => {
  await server?.close();
  await api?.close();
  await receiver?.close();
  await fake?.close();
});

describe('worker metrics', () => {
  it('counts webhook attempts by outcome, once per request sent, and endpoints disabled', async () => {
    const a = await newAccount(api.url);
    const endpoint = async (u: string) => {
      const res = await a.api.post('/v1/webhook_endpoints', { url: u, subscriptions: ['customer.created'] });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const ok = await endpoint(`${receiver.url}/ok`);
    const failing = await endpoint(`${receiver.url}/fail`);
    const refused = await endpoint(`https://127.0.0.1:${await closedPort()}/hook`);
    const customer = (await a.api.post('/v1/customers', { email: 'hooked@example.com' })).body;
    const event = (await Event.findOne({ event: 'customer.created', 'payload.id': customer.id }).lean())!;
    const attempt = (endpointId: string) =>
      activities.deliverWebhookAttempt({ deliveryId: workflowIds.webhookDelivery(event._id as string, endpointId), eventId: event._id as string, endpointId, attempt: 1, retryDelayMs: 5_000 });

    expect(await attempt(ok)).toMatchObject({ result: 'succeeded' });
    expect(await attempt(failing)).toMatchObject({ result: 'retry', statusCode: 500 });
    expect(await attempt(refused)).toMatchObject({ result: 'disabled', error: 'connection_error' });
    // A retried activity finds its attempt recorded and sends nothing: not counted again.
    expect(await attempt(ok)).toMatchObject({ result: 'succeeded' });
    expect(receiver.requestsTo('/ok')).toHaveLength(1);

    const { status, samples } = await scrape(url);
    expect(status).toBe(200);
    expect(valueOf(samples, 'payments_webhook_delivery_attempts_total', { outcome: 'success' })).toBe(1);
    expect(valueOf(samples, 'payments_webhook_delivery_attempts_total', { outcome: 'failure' })).toBe(1);
    expect(valueOf(samples, 'payments_webhook_delivery_attempts_total', { outcome: 'disabled' })).toBe(1);
    expect(valueOf(samples, 'payments_webhook_endpoints_disabled_total', { reason: 'connection_error' })).toBe(1);
  });

  it('counts allocations by outcome, failures included', async () => {
    const a = await newAccount(api.url);
    const { customer, wallet } = await customerWithWallet(a.api, 'allocated@example.com');
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    await invoiceOf(a.api, customer.id, '50.00', '2027-01-01');
    // The oracle is down when the transaction is recorded: the API's inline allocation leaves it unallocated.
    oracle.current = { usdPrice: async () => { throw new PriceUnavailableError('down'); } };
    const txId: string = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash() })).body.id;
    await expect(activities.allocateCryptoTransactions([txId])).rejects.toBeInstanceOf(PriceUnavailableError);
    oracle.current = new FixedRateOracle();
    expect(await activities.allocateCryptoTransactions([txId])).toMatchObject([{ status: 'allocated', allocations: 1 }]);
    expect(await activities.allocateCryptoTransactions([txId, 'trxn_nosuchtransaction000000'])).toMatchObject([{ status: 'already_allocated' }, { status: 'missing' }]);

    const { samples } = await scrape(url);
    const count = (outcome: string) => valueOf(samples, 'payments_allocations_total', { outcome });
    expect(['allocated', 'already_allocated', 'missing', 'price_unavailable', 'conflict', 'error'].map(count)).toEqual([1, 1, 1, 1, 0, 0]);
  });

  it('sets the chain scan lag per currency from each scan', async () => {
    const lag = async () => valueOf((await scrape(url)).samples, 'payments_chain_scan_lag_blocks', { currency: 'BTC' });
    expect(await lag()).toBeUndefined();
    // From block 0 of 120: one scan reads at most 50 blocks.
    let cursor = { height: 0, hash: fake.hashAt(0)! };
    const first = (await activities.scanChain('BTC', cursor))!;
    expect(first.cursor.height).toBe(50);
    expect(await lag()).toBe(70);
    cursor = first.cursor;
    const second = (await activities.scanChain('BTC', cursor))!;
    expect(second.cursor.height).toBe(100);
    expect(await lag()).toBe(20);
    // The tip moved on; the next scan reaches it.
    fake.mine(3);
    expect((await activities.scanChain('BTC', second.cursor))!.cursor.height).toBe(123);
    expect(await lag()).toBe(0);
  });

  it('reads the age of the oldest undispatched event at each scrape', async () => {
    // Without Temporal the API records events and dispatches none.
    const a = await newAccount(api.url);
    expect((await a.api.post('/v1/customers', { email: 'waiting@example.com' })).status).toBe(201);
    const oldest = await Event.findOne({ dispatched: false }).sort({ timestamp: 1 }).lean();
    expect(oldest).not.toBeNull();
    const before = Date.now();
    const age = valueOf((await scrape(url)).samples, 'payments_oldest_undispatched_event_age_seconds')!;
    const expected = (before - new Date(oldest!.timestamp).getTime()) / 1000;
    expect(age).toBeGreaterThanOrEqual(expected);
    expect(age).toBeLessThan(expected + 5);
    await Event.updateMany({ dispatched: false }, { $set: { dispatched: true, dispatched_at: new Date() } });
    expect(valueOf((await scrape(url)).samples, 'payments_oldest_undispatched_event_age_seconds')).toBe(0);
  });

  it('answers 404 outside GET /metrics', async () => {
    expect((await fetch(url.replace('/metrics', '/'))).status).toBe(404);
    expect((await fetch(url, { method: 'POST' })).status).toBe(404);
  });

  it('with METRICS_TOKEN answers only `Authorization: Bearer <token>`, and listens on HOST only then', async () => {
    const token = 'metrics-token-for-the-worker-test-0123456789';
    const guarded = await startMetricsServer({ register: metrics.register, host: '127.0.0.1', port: 0, token, temporalMetricsUrl: null, logger });
    try {
      const at = `http://127.0.0.1:${guarded.port}/metrics`;
      for (const headers of [{}, { Authorization: 'Bearer nope' }, { Authorization: `token ${token}` }] as Record<string, string>[]) {
        const res = await fetch(at, { headers });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
        expect(await res.text()).not.toContain('payments_');
      }
      const ok = await scrape(at, token);
      expect(ok.status).toBe(200);
      expect(valueOf(ok.samples, 'payments_oldest_undispatched_event_age_seconds')).toEqual(expect.any(Number));
    } finally {
      await guarded.close();
    }
    // Without a token nothing but this machine may scrape it, whatever HOST says.
    expect(metricsHost('0.0.0.0', null)).toBe('127.0.0.1');
    expect(metricsHost('10.1.2.3', null)).toBe('127.0.0.1');
    expect(metricsHost('::1', null)).toBe('::1');
    expect(metricsHost('0.0.0.0', token)).toBe('0.0.0.0');
  });
});
