/**
 * Webhook URLs connect to port 443 or one of WEBHOOK_ALLOWED_PORTS (any port where private
 * networks are allowed, for local receivers): at create and update, and again at delivery, so
 * an endpoint saved before the rule cannot make the service probe `host:port` and show the answer.
 */
import https from 'node:https';
import pino from 'pino';
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { HttpsReceiver, makeTestCertificates, startHttpsReceiver } from '../support/httpsReceiver';
import { testDependencies } from '../support/dependencies';
import { loadConfig } from '../../src/config';
import { createWebhooksActivities } from '../../src/activities/webhooks';
import { isAllowedWebhookPort, webhookPortRule } from '../../src/lib/network';
import { Event } from '../../src/models/event';
import { WebhookEndpoint } from '../../src/models/webhookEndpoint';
import { WebhookDelivery } from '../../src/models/webhookDelivery';
import { workflowIds } from '../../src/temporal/workflowIds';

useTestDatabase();

let api: TestApi;
let receiver: HttpsReceiver;
const certs = makeTestCertificates();
beforeAll(async () => {
  api = await startTestApi();
  receiver = await startHttpsReceiver(certs);
});
afterAll(async () => {
  await api?.close();
  await receiver?.close();
});

describe('webhook ports', () => {
  it('allows 443 and the configured ports; any port where private networks are allowed', () => {
    const u = (s: string) => new URL(s);
    expect(isAllowedWebhookPort(u('https://hooks.example.com/x'), [])).toBe(true);
    expect(isAllowedWebhookPort(u('https://hooks.example.com:443/x'), [])).toBe(true);
    expect(isAllowedWebhookPort(u('https://hooks.example.com:8443/x'), [])).toBe(false);
    expect(isAllowedWebhookPort(u('https://hooks.example.com:22/x'), [8443])).toBe(false);
    expect(isAllowedWebhookPort(u('https://hooks.example.com:8443/x'), [8443])).toBe(true);
    expect(isAllowedWebhookPort(u('https://hooks.example.com:22/x'), null)).toBe(true);
    expect(webhookPortRule({ webhookAllowPrivateNetworks: false, webhookAllowedPorts: [8443] })).toEqual([8443]);
    expect(webhookPortRule({ webhookAllowPrivateNetworks: true, webhookAllowedPorts: [] })).toBeNull();
  });

  it('refuses another port at create and update with 422 on url, unless listed in WEBHOOK_ALLOWED_PORTS', async () => {
    const a = await newAccount(api.url);
    for (const url of ['https://hooks.example.com:8443/hook', 'https://hooks.example.com:22/', 'https://203.0.113.9:6379/']) {
      const res = await a.api.post('/v1/webhook_endpoints', { url, subscriptions: ['*'] });
      expect([url, res.status, res.body.error?.param]).toEqual([url, 422, 'url']);
      expect(res.body.errors).toEqual({ url: ['must use port 443'] });
    }
    const created = await a.api.post('/v1/webhook_endpoints', { url: 'https://hooks.example.com:443/hook', subscriptions: ['*'] });
    expect(created.status).toBe(201);
    const put = await a.api.put(`/v1/webhook_endpoints/${created.body.id}`, { url: 'https://hooks.example.com:8443/hook' });
    expect([put.status, put.body.error?.param]).toEqual([422, 'url']);

    const listing = await startTestApi({}, { WEBHOOK_ALLOWED_PORTS: '8443,9443' });
    try {
      const b = client(listing.url, a.token);
      expect((await b.post('/v1/webhook_endpoints', { url: 'https://hooks.example.com:8443/hook', subscriptions: ['*'] })).status).toBe(201);
      const refused = await b.post('/v1/webhook_endpoints', { url: 'https://hooks.example.com:22/hook', subscriptions: ['*'] });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual({ url: ['must use port 443 or one of 8443, 9443'] });
    } finally {
      await listing.close();
    }
  });

  it('checks the port again at delivery: an endpoint saved before the rule is disabled (port_not_allowed) and nothing is sent', async () => {
    // Created where any port was allowed (local receivers), delivered by a worker that allows only 443.
    const allowing = await startTestApi({}, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    let endpointId: string;
    let eventId: string;
    try {
      const a = client(allowing.url, (await newAccount(api.url)).token);
      const created = await a.post('/v1/webhook_endpoints', { url: `${receiver.url}/ported`, subscriptions: ['customer.created'] });
      expect(created.status).toBe(201);
      endpointId = created.body.id;
      const customer = (await a.post('/v1/customers', { email: 'ported@example.com' })).body;
      eventId = (await Event.findOne({ event: 'customer.created', 'payload.id': customer.id }).lean())!._id as string;
    } finally {
      await allowing.close();
    }
    const activitiesWith = (env: Record<string, string>) =>
      createWebhooksActivities({
        ...testDependencies({ config: loadConfig({ ...process.env, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', ...env }), logger: pino({ level: 'silent' }) }),
        httpsAgent: new https.Agent({ ca: certs.ca }),
        deliveryTimeoutMs: 3_000,
      });
    const deliveryId = workflowIds.webhookDelivery(eventId, endpointId);
    const outcome = await activitiesWith({ WEBHOOK_ALLOWED_PORTS: '' }).deliverWebhookAttempt({ deliveryId, eventId, endpointId, attempt: 1, retryDelayMs: 5_000 });
    expect(outcome).toEqual({ result: 'disabled', error: 'port_not_allowed' });
    expect(receiver.requestsTo('/ported')).toHaveLength(0);
    const endpoint = await WebhookEndpoint.findById(endpointId).lean();
    expect(endpoint).toMatchObject({ enabled: false, disabled_reason: 'port_not_allowed' });
    const delivery = await WebhookDelivery.findById(deliveryId).lean();
    expect(delivery?.attempts?.[0]).toMatchObject({ error: 'port_not_allowed', status_code: null, response_body: null });
  });
});
