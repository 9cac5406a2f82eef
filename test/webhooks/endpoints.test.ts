import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { WebhookDelivery } from '../../src/models/webhookDelivery';
import { EVENT_NAMES } from '../../src/lib/eventNames';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const URL_OK = 'https://hooks.example.com/payments';
const SECRET = /^whsec_[0-9a-f]{64}$/;

describe('webhook endpoints', () => {
  it('creates with 201 and the full secret once; other reads show only the last four characters', async () => {
    const a = await newAccount(api.url);
    const res = await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['invoice.paid', 'customer.created'], description: ' Main ' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ url: URL_OK, subscriptions: ['invoice.paid', 'customer.created'], enabled: true, description: 'Main', disabled_reason: null });
    expect(res.body.id).toMatch(/^we_[0-9A-Za-z]{24}$/);
    expect(res.body.signing_secret).toMatch(SECRET);
    expect(res.body.signing_secret_last4).toBe(res.body.signing_secret.slice(-4));
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const got = await a.api.get(`/v1/webhook_endpoints/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('signing_secret');
    expect(got.body.signing_secret_last4).toBe(res.body.signing_secret_last4);
    const list = await a.api.get('/v1/webhook_endpoints');
    expect(list.body.webhook_endpoints[0]).not.toHaveProperty('signing_secret');
    // Also under /api/v1.
    expect((await a.api.get(`/api/v1/webhook_endpoints/${res.body.id}`)).status).toBe(200);
  });

  it('defaults, lists newest first with pagination, updates by PUT', async () => {
    const a = await newAccount(api.url);
    expect((await a.api.get('/v1/webhook_endpoints')).body).toEqual({ webhook_endpoints: [], pagination: { page: 1, pages: 0, count: 0 } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await a.api.post('/v1/webhook_endpoints', { url: `${URL_OK}/${i}`, subscriptions: ['*'] })).body.id);
    const list = await a.api.get('/v1/webhook_endpoints');
    expect(list.body.webhook_endpoints.map((e: any) => e.id)).toEqual([...ids].reverse());
    expect(list.body.pagination).toEqual({ page: 1, pages: 1, count: 3 });
    expect((await a.api.get('/v1/webhook_endpoints?page=2')).body.webhook_endpoints).toEqual([]);
    expect((await a.api.get('/v1/webhook_endpoints?page=0')).status).toBe(422);

    const put = await a.api.put(`/v1/webhook_endpoints/${ids[0]}`, {
      url: 'https://other.example.com/h',
      subscriptions: ['price.created', 'price.created'],
      enabled: false,
      description: 'billing',
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ url: 'https://other.example.com/h', subscriptions: ['price.created'], enabled: false, description: 'billing' });
    expect(put.body).not.toHaveProperty('signing_secret');
    const partial = await a.api.put(`/v1/webhook_endpoints/${ids[0]}`, { enabled: true });
    expect(partial.body).toMatchObject({ url: 'https://other.example.com/h', enabled: true, description: 'billing' });
    const cleared = await a.api.put(`/v1/webhook_endpoints/${ids[0]}`, { description: null });
    expect(cleared.body.description).toBeNull();
  });

  it('regenerates the secret: a new full secret, the old one gone', async () => {
    const a = await newAccount(api.url);
    const created = (await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['*'] })).body;
    const res = await a.api.post(`/v1/webhook_endpoints/${created.id}/regenerate_secret`);
    expect(res.status).toBe(200);
    expect(res.body.signing_secret).toMatch(SECRET);
    expect(res.body.signing_secret).not.toBe(created.signing_secret);
    expect((await a.api.get(`/v1/webhook_endpoints/${created.id}`)).body.signing_secret_last4).toBe(res.body.signing_secret.slice(-4));
  });

  it('deletes with 204, and its deliveries with it', async () => {
    const a = await newAccount(api.url);
    const created = (await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['*'] })).body;
    await WebhookDelivery.create({ _id: `webhook-evt_x-${created.id}`, account_id: a.account_id, sandbox: null, endpoint_id: created.id, event_id: 'evt_x', event: 'customer.created', status: 'succeeded' });
    const del = await a.api.del(`/v1/webhook_endpoints/${created.id}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    expect((await a.api.get(`/v1/webhook_endpoints/${created.id}`)).status).toBe(404);
    expect(await WebhookDelivery.countDocuments({ endpoint_id: created.id })).toBe(0);
    expect((await a.api.del(`/v1/webhook_endpoints/${created.id}`)).status).toBe(404);
  });

  it('lists deliveries of an endpoint (empty) and refuses redelivery of an unknown event', async () => {
    const a = await newAccount(api.url);
    const created = (await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['*'] })).body;
    const events = await a.api.get(`/v1/webhook_endpoints/${created.id}/events`);
    expect(events.status).toBe(200);
    expect(events.body).toEqual({ webhook_events: [], pagination: { page: 1, pages: 0, count: 0 } });
    const re = await a.api.post(`/v1/webhook_endpoints/${created.id}/events/evt_nope/redeliver`);
    expect(re.status).toBe(404);
    expect(re.body.error).toMatchObject({ code: 'resource_not_found', param: 'event_id' });
  });

  describe('validation', () => {
    it('answers 400 parameter_missing for a missing url or subscriptions', async () => {
      const a = await newAccount(api.url);
      const noUrl = await a.api.post('/v1/webhook_endpoints', { subscriptions: ['*'] });
      expect(noUrl.status).toBe(400);
      expect(noUrl.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_missing', param: 'url' });
      const noSubs = await a.api.post('/v1/webhook_endpoints', { url: URL_OK });
      expect(noSubs.status).toBe(400);
      expect(noSubs.body.error.param).toBe('subscriptions');
    });

    it.each([
      [{ subscriptions: ['customer.exploded'] }, 'subscriptions'],
      [{ subscriptions: [] }, 'subscriptions'],
      [{ subscriptions: ['*', 'customer.created'] }, 'subscriptions'],
      [{ subscriptions: 'customer.created' }, 'subscriptions'],
      [{ subscriptions: [42] }, 'subscriptions[]'],
      [{ url: 'http://hooks.example.com/x' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: '  ' }, 'url'],
      [{ url: 'https://user:pw@hooks.example.com/' }, 'url'],
      [{ url: 'https://127.0.0.1:8443/hook' }, 'url'],
      [{ url: 'https://localhost/hook' }, 'url'],
      [{ url: 'https://10.1.2.3/hook' }, 'url'],
      [{ url: 'https://169.254.169.254/latest/meta-data' }, 'url'],
      [{ url: 'https://[::1]/hook' }, 'url'],
      [{ url: 'https://[fd00::1]/hook' }, 'url'],
      [{ url: 'https://0x7f.1/hook' }, 'url'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ description: 5 }, 'description'],
    ])('refuses %j with 422 parameter_invalid naming %s', async (patch, param) => {
      const a = await newAccount(api.url);
      const res = await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['*'], ...patch });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param });
      expect(typeof res.body.error.message).toBe('string');
      expect(Object.keys(res.body.errors)).toEqual([param]);
      // The same rules on update.
      const created = (await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['*'] })).body;
      const put = await a.api.put(`/v1/webhook_endpoints/${created.id}`, patch);
      expect(put.status).toBe(422);
      expect(put.body.error.param).toBe(param);
    });

    it('accepts every event name of the spec, and ["*"]', async () => {
      const a = await newAccount(api.url);
      const res = await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: [...EVENT_NAMES] });
      expect(res.status).toBe(201);
      expect(res.body.subscriptions).toEqual([...EVENT_NAMES]);
    });

    it('allows private targets when WEBHOOK_ALLOW_PRIVATE_NETWORKS is on', async () => {
      const allowing = await startTestApi({}, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
      try {
        const a = client(allowing.url, (await newAccount(api.url)).token);
        const res = await a.post('/v1/webhook_endpoints', { url: 'https://127.0.0.1:8443/hook', subscriptions: ['*'] });
        expect(res.status).toBe(201);
        expect((await a.post('/v1/webhook_endpoints', { url: 'http://127.0.0.1/hook', subscriptions: ['*'] })).status).toBe(422);
      } finally {
        await allowing.close();
      }
    });

    it('refuses URLs on addresses that are not global unicast, including tunnel and translation forms (test/lib/network.test.ts classifies)', async () => {
      const a = await newAccount(api.url);
      for (const host of ['[::ffff:a00:1]', '[64:ff9b:1::a00:1]', '[2002:7f00:1::1]', '[2001::1]', '192.88.99.1', '[2001:db8::1]']) {
        const res = await a.api.post('/v1/webhook_endpoints', { url: `https://${host}/hook`, subscriptions: ['*'] });
        expect([host, res.status, res.body.error?.param]).toEqual([host, 422, 'url']);
      }
      expect((await a.api.post('/v1/webhook_endpoints', { url: 'https://[2606:4700:4700::1111]/hook', subscriptions: ['*'] })).status).toBe(201);
    });
  });

  it('answers 404 for endpoints of another account or of the other scope', async () => {
    const a = await newAccount(api.url);
    const b = await newAccount(api.url);
    const created = (await a.api.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['*'] })).body;
    for (const c of [b.api, a.sandbox]) {
      const paths = [
        c.get(`/v1/webhook_endpoints/${created.id}`),
        c.put(`/v1/webhook_endpoints/${created.id}`, { enabled: false }),
        c.post(`/v1/webhook_endpoints/${created.id}/regenerate_secret`),
        c.get(`/v1/webhook_endpoints/${created.id}/events`),
        c.post(`/v1/webhook_endpoints/${created.id}/events/evt_x/redeliver`),
        c.del(`/v1/webhook_endpoints/${created.id}`),
      ];
      for (const res of await Promise.all(paths)) {
        expect(res.status).toBe(404);
        expect(res.body.error).toMatchObject({ code: 'resource_not_found', param: 'id' });
      }
      expect((await c.get('/v1/webhook_endpoints')).body.pagination.count).toBe(0);
    }
    const sandboxed = (await a.sandbox.post('/v1/webhook_endpoints', { url: URL_OK, subscriptions: ['*'] })).body;
    expect((await a.api.get(`/v1/webhook_endpoints/${sandboxed.id}`)).status).toBe(404);
    expect((await a.sandbox.get('/v1/webhook_endpoints')).body.webhook_endpoints.map((e: any) => e.id)).toEqual([sandboxed.id]);
    expect((await a.api.get(`/v1/webhook_endpoints/${created.id}`)).body.enabled).toBe(true);
  });

  it('needs a token', async () => {
    const res = await fetch(`${api.url}/v1/webhook_endpoints`);
    expect(res.status).toBe(401);
  });
});
