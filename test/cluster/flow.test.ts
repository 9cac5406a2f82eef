/**
 * The cluster job of `npm test` (scripts/test.sh, jest.cluster.config.js): the app against the
 * real Temporal server (go.temporal.io/server: frontend, history, matching and worker as separate
 * processes on PostgreSQL, scripts/temporal-cluster.sh) with mutual TLS on its frontend. The API
 * and the worker run as processes (as `npm run start:cluster` runs them) with the client
 * certificate in TEMPORAL_TLS_CERT / _KEY / _CA / _SERVER_NAME.
 *
 * 1. A plaintext client and a TLS client without a certificate are refused; one with it is served.
 * 2. Allocation and webhook delivery: a webhook endpoint on a local HTTPS receiver, a customer, an
 *    invoice paid by a manual BTC transaction that the worker allocates, the signed deliveries.
 * 3. Subscription renewal: a weekly subscription started 15 days ago is billed for its three
 *    periods (two renewals caught up), a daily one starting in a few seconds is billed when its
 *    durable timer fires, and the workflows are found by their search attributes (registered by
 *    the cluster script) in the server's SQL visibility store.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Connection } from '@temporalio/client';
import type { ScenarioApp, ScenarioContext } from '../../faults/scenario';
import { startScenarioApp } from '../../faults/scenario';
import { receiverCa, startReceiver, Receiver } from '../../faults/receiver';
import { findWallet, randomBtcAddress } from '../../faults/scenarios/allocations';
import { waitUntil } from '../../faults/stack';
import { client } from '../support/api';
import { waitFor } from '../support/wait';
import { loadConfig } from '../../src/config';
import { connectTemporal, pingTemporal, TemporalHandle } from '../../src/temporal/client';
import { verifyWebhookSignature } from '../../src/cryptography/webhookSignature';
import { workflowIds } from '../../src/temporal/workflowIds';
import { Invoice } from '../../src/models/invoice';

const address = process.env.TEST_TEMPORAL_CLUSTER_ADDRESS;
const certs = process.env.TEST_TEMPORAL_CLUSTER_CERTS;

/** The client settings of the API and the worker (docs/architecture.md, "Exposing Temporal"). */
const tlsEnv = (): Record<string, string> => ({
  TEMPORAL_TLS_CERT: join(certs!, 'client.pem'),
  TEMPORAL_TLS_KEY: join(certs!, 'client.key'),
  TEMPORAL_TLS_CA: join(certs!, 'ca.pem'),
  TEMPORAL_TLS_SERVER_NAME: 'localhost',
});

interface Delivery {
  event: string;
  body: string;
  signature: string;
}

let app: ScenarioApp | null = null;
let receiver: Receiver | null = null;
let temporal: TemporalHandle | null = null;
const deliveries: Delivery[] = [];

beforeAll(async () => {
  // Not a skip: this file exists to run against the cluster that scripts/test.sh starts.
  if (!address || !certs) throw new Error('TEST_TEMPORAL_CLUSTER_ADDRESS and TEST_TEMPORAL_CLUSTER_CERTS are not set: run `npm test` (scripts/test.sh starts the Temporal cluster)');
  const ctx: ScenarioContext = {
    mongoServerUrl: process.env.TEST_MONGODB_URL!,
    temporalAddress: address,
    runDir: mkdtempSync(join(process.env.TEST_RUN_DIR ?? tmpdir(), 'cluster-')),
    progress: () => undefined,
  };
  const ca = receiverCa(ctx.runDir);
  receiver = await startReceiver(ca, (_eventId, req, body) => {
    deliveries.push({ event: JSON.parse(body).event, body, signature: String(req.headers['x-service-signature'] ?? '') });
    return 200;
  });
  app = await startScenarioApp(ctx, 'cluster', { ...ca.env, ...tlsEnv() });
  const config = loadConfig({ ...process.env, ...tlsEnv(), LOG_LEVEL: 'silent' });
  temporal = await connectTemporal({ ...config.temporal, address, clientTransport: 'grpc-js' });
}, 180_000);

afterAll(async () => {
  await temporal?.connection.close().catch(() => undefined);
  await receiver?.close();
  await app?.close();
});

describe('the app on the real Temporal server with mutual TLS', () => {
  it('refuses a plaintext client and one without a client certificate, and serves one with it', async () => {
    const refused = async (opts: Parameters<typeof Connection.connect>[0]) => {
      const connection = await Connection.connect({ ...opts, connectTimeout: 3_000 }).catch((err: Error) => err);
      if (connection instanceof Error) return true;
      try {
        await connection.workflowService.getSystemInfo({});
        return false;
      } catch {
        return true;
      } finally {
        await connection.close();
      }
    };
    expect(await refused({ address: address! })).toBe(true);
    expect(await refused({ address: address!, tls: { serverNameOverride: 'localhost', serverRootCACertificate: readFileSync(join(certs!, 'ca.pem')) } })).toBe(true);
    await pingTemporal(temporal!);
    const ns = await temporal!.connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(ns.namespaceInfo?.name).toBe('default');
  });

  it('allocates a transaction to its invoice and delivers the signed webhooks', async () => {
    const a = app!;
    const auth = await client(a.apiUrl).post('/v1/auth', { email: a.email, password: a.password });
    expect(auth.status).toBe(200);
    const api = client(a.apiUrl, auth.body.token);
    const endpoint = await api.post('/v1/webhook_endpoints', { url: receiver!.url, subscriptions: ['*'] });
    expect(endpoint.status).toBe(201);
    const secret: string = endpoint.body.signing_secret;

    const customer = await api.post('/v1/customers', { email: 'cluster-buyer@example.com' });
    expect(customer.status).toBe(201);
    const wallet = await findWallet(a.client, customer.body.id);
    const btc = await api.post('/v1/crypto_addresses', { wallet_id: wallet, currency_code: 'BTC', address: randomBtcAddress() });
    expect(btc.status).toBe(201);
    const product = await api.post('/v1/products', { name: 'Cluster goods' });
    const price = await api.post('/v1/prices', { product_id: product.body.id, amount: 10000 });
    const invoice = await api.post('/v1/invoices', { customer_id: customer.body.id, due_date: '2030-01-01', line_items: [{ price_id: price.body.id }] });
    expect(invoice.status).toBe(201);

    // 0.002 BTC = 100.00 USD at the fixed oracle: exactly the invoice.
    const tx = await api.post('/v1/crypto_transactions', { to_address_id: btc.body.id, amount: '0.002', currency_code: 'BTC', transaction_id: randomBytes(32).toString('hex') });
    expect(tx.status).toBe(201);
    await waitUntil('the worker to allocate the transaction to the invoice', async () => (await api.get(`/v1/invoices/${invoice.body.id}`)).body.status === 'paid', 90_000, 250);
    const paid = (await api.get(`/v1/invoices/${invoice.body.id}`)).body;
    expect(paid.amount_paid).toBe(paid.total_amount);
    // The allocation ran as a workflow on the cluster.
    const allocation = await temporal!.client.workflow.getHandle(workflowIds.allocation(customer.body.id)).describe();
    expect(allocation.type).toBe('allocationWorkflow');

    await waitUntil('invoice.paid delivered', () => deliveries.some((d) => d.event === 'invoice.paid'), 90_000, 250);
    for (const name of ['customer.created', 'invoice.created', 'crypto_transaction.received', 'invoice.paid']) {
      expect(deliveries.map((d) => d.event)).toContain(name);
    }
    for (const d of deliveries) expect(await verifyWebhookSignature(d.body, d.signature, secret)).toBe(true);
  }, 240_000);

  it('renews subscriptions: catches up past periods, bills when a timer fires, and finds them by search attribute', async () => {
    const a = app!;
    const api = a.client;
    const customer = (await api.post('/v1/customers', { email: 'cluster-subscriber@example.com' })).body;
    const product = (await api.post('/v1/products', { name: 'Cluster plan' })).body;
    const weekly = (await api.post('/v1/prices', { product_id: product.id, amount: 700, recurring: { interval: 'week', interval_count: 1 } })).body;
    const daily = (await api.post('/v1/prices', { product_id: product.id, amount: 100, recurring: { interval: 'day', interval_count: 1 } })).body;

    const started = new Date(Date.now() - 15 * 86_400_000).toISOString().slice(0, 10);
    const past = await api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: started, items: [{ price_id: weekly.id }] }] });
    expect(past.status).toBe(201);
    const soon = new Date(Date.now() + 5_000);
    const next = await api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: soon.toISOString(), items: [{ price_id: daily.id }] }] });
    expect(next.status).toBe(201);

    // Started 15 days ago, weekly: the periods starting then, 7 and 14 days later, once each.
    const periods = async (id: string) => (await Invoice.find({ subscription_id: id }).lean()).map((i) => new Date(i.period_start!).toISOString().slice(0, 10)).sort();
    await waitUntil('the three weekly periods invoiced', async () => (await periods(past.body.id)).length >= 3, 90_000, 250);
    const day = (n: number) => new Date(new Date(`${started}T00:00:00Z`).getTime() + n * 86_400_000).toISOString().slice(0, 10);
    expect(await periods(past.body.id)).toEqual([day(0), day(7), day(14)]);

    // The daily one: nothing before its start, its first invoice once the server's timer fires.
    await waitUntil('the daily subscription invoiced after its start', async () => (await periods(next.body.id)).length >= 1, 90_000, 250);
    expect(Date.now()).toBeGreaterThanOrEqual(soon.getTime());
    expect(await periods(next.body.id)).toHaveLength(1);

    // Both workflows run on, found in the server's visibility store by the search attributes.
    for (const id of [past.body.id, next.body.id]) {
      expect((await temporal!.client.workflow.getHandle(workflowIds.subscription(id)).describe()).status.name).toBe('RUNNING');
    }
    const found = await waitFor(async () => {
      const ids: string[] = [];
      for await (const wf of temporal!.client.workflow.list({ query: `CustomerId = "${customer.id}" AND ExecutionStatus = "Running"` })) ids.push(wf.workflowId);
      return ids.length === 2 ? ids.sort() : null;
    }, 'the subscriptions listed by CustomerId', 60_000);
    expect(found).toEqual([workflowIds.subscription(past.body.id), workflowIds.subscription(next.body.id)].sort());
  }, 240_000);
});
