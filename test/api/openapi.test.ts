/**
 * The OpenAPI document cannot drift from the code: its operations are exactly the routes the app
 * registers, each request body and query is the very schema object the route validates with
 * (seen by recording every validator call while the real app answers), and real responses of
 * every resource validate against the response schemas it publishes.
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import pino from 'pino';
import type Router from '@koa/router';
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { testDependencies } from '../support/dependencies';
import { createApp } from '../../src/api/app';
import { loadConfig } from '../../src/config';
import { openapiDocument, openapiPath } from '../../src/api/openapi/document';
import { OPERATIONS } from '../../src/api/openapi/operations';
import { BTC_BECH32, customerWithWallet, txHash } from '../crypto/helpers';

/** Every call of a validator made by src/api/validation.ts: which schema object checked what. */
type Call = { kind: 'body' | 'query'; schema: object };
const calls: Call[] = ((globalThis as Record<string, unknown>).__validatorCalls ??= []) as Call[];

jest.mock('../../src/api/validation', () => {
  const actual = jest.requireActual('../../src/api/validation');
  const record = ((globalThis as Record<string, unknown>).__validatorCalls ??= []) as Call[];
  const wrap = (kind: Call['kind'], v: ((d: unknown) => unknown) & { schema: object }) =>
    Object.assign(
      (d: unknown) => {
        record.push({ kind, schema: v.schema });
        return v(d);
      },
      { schema: v.schema },
    );
  return {
    ...actual,
    compile: (schema: object) => wrap('body', actual.compile(schema)),
    compileQuery: (schema: object) => wrap('query', actual.compileQuery(schema)),
    pageQuery: wrap('query', actual.pageQuery),
  };
});

type Json = Record<string, any>;
const doc = openapiDocument() as Json;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Pages outside /v1: not API operations, listed here so that a new one is a decision. */
const PAGES = [
  'GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /pay/:secret', 'GET /pay/:secret/qr.svg', 'GET /pay/assets/:file', 'GET /docs', 'GET /docs/errors',
  // An invoice's hosted page, its QR codes and its PDF (src/api/publicInvoices).
  'GET /invoice/:secret', 'GET /invoice/:secret/qr.svg', 'GET /invoice/:secret/pdf',
  // The finance console (src/api/console): HTML pages, its assets, CSV downloads and its session's forms.
  'GET /console', 'GET /console/sign-in', 'POST /console/sign-in', 'POST /console/sign-out', 'POST /console/scope',
  'GET /console/assets/:file', 'GET /console/subscriptions', 'GET /console/subscriptions/:id', 'GET /console/receivables',
  'GET /console/collections', 'GET /console/reports/mrr.csv', 'GET /console/reports/receivables.csv', 'GET /console/reports/collections.csv',
  'GET /console/claims', 'POST /console/claims/:id/approval', 'POST /console/claims/:id/rejection',
  'GET /console/customers', 'GET /console/customers/:id', 'GET /console/invoices', 'GET /console/invoices/:id', 'POST /console/invoices/:id/links',
  'GET /console/invoices/:id/mark-paid', 'POST /console/invoices/:id/mark-paid', 'GET /console/invoices/:id/void', 'POST /console/invoices/:id/void',
  'GET /console/payments', 'GET /console/payments/:id',
];

function registeredRoutes(): Map<string, Set<string>> {
  const app = createApp(testDependencies());
  const byPrefix = new Map<string, Set<string>>();
  for (const mw of app.middleware as unknown as { router?: Router }[]) {
    if (!mw.router) continue;
    const prefix = (mw.router as unknown as { opts: { prefix?: string } }).opts.prefix ?? '';
    const routes = byPrefix.get(prefix) ?? new Set<string>();
    for (const layer of mw.router.stack) {
      const path = String(layer.path).slice(prefix.length) || '/';
      for (const m of layer.methods.filter((x: string) => x !== 'HEAD')) routes.add(`${m} ${path}`);
    }
    byPrefix.set(prefix, routes);
  }
  return byPrefix;
}

function documentedOperations(): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of Object.keys(item).filter((k) => METHODS.includes(k))) {
      out.add(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`);
    }
  }
  return out;
}

function operationOf(method: string, path: string): Json {
  return doc.paths[openapiPath(path)][method];
}

describe('OpenAPI document: operations', () => {
  it('lists exactly the routes registered under /v1 and /api/v1, and nothing else is served', () => {
    const routes = registeredRoutes();
    const documented = documentedOperations();
    expect([...routes.keys()].sort()).toEqual(['', '/api/v1', '/v1']);
    expect([...routes.get('/v1')!].sort()).toEqual([...documented].sort());
    expect([...routes.get('/api/v1')!].sort()).toEqual([...documented].sort());
    expect([...routes.get('')!].sort()).toEqual([...PAGES].sort());
    expect(documented.size).toBe(OPERATIONS.length);
    expect(doc.servers.map((s: Json) => s.url)).toEqual(['/v1', '/api/v1']);
  });

  it('shows the validators\' own schema objects as request bodies and query parameters', () => {
    for (const op of OPERATIONS) {
      const o = operationOf(op.method, op.path);
      if (op.body) expect(o.requestBody.content['application/json'].schema).toBe(op.body.schema);
      else expect(o.requestBody).toBeUndefined();
      const query = (o.parameters ?? []).filter((p: Json) => p.in === 'query');
      if (op.query) {
        const props = (op.query.schema as Json).properties;
        expect(query.map((p: Json) => p.name)).toEqual(Object.keys(props));
        for (const p of query) expect(p.schema).toBe(props[p.name]);
      } else {
        expect(query).toEqual([]);
      }
    }
  });

  it('answers a 4xx in every operation but the document itself, and the structured error everywhere but POST /auth', () => {
    for (const op of OPERATIONS) {
      const statuses = Object.keys(operationOf(op.method, op.path).responses).map(Number);
      if (op.path !== '/openapi.json') expect(statuses.some((s) => s >= 400 && s < 500)).toBe(true);
      expect(statuses).toContain(500);
      // The database unreachable (service_unavailable): every operation but the document itself.
      if (op.path !== '/openapi.json') expect(statuses).toContain(503);
      if (!op.public) expect(statuses).toEqual(expect.arrayContaining([401, 429]));
      if (op.method === 'post' && !op.public) expect(statuses).toContain(409);
    }
    const codes = doc.components.schemas.Error.properties.error.properties.code.enum;
    expect(codes).toEqual(expect.arrayContaining(['resource_not_found', 'parameter_missing', 'parameter_invalid', 'invalid_credentials', 'rate_limit_error']));
  });
});

describe('OpenAPI document: against the running app', () => {
  useTestDatabase();
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({}, { CLAIM_VERIFICATION: 'off' });
  });
  afterAll(() => api.close());

  it('is served at /v1/openapi.json and /api/v1/openapi.json without a token', async () => {
    for (const path of ['/v1/openapi.json', '/api/v1/openapi.json']) {
      const res = await client(api.url).get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual(JSON.parse(JSON.stringify(doc)));
      expect(res.body.openapi).toBe('3.1.0');
    }
  });

  it('each route validates with the schema objects the document shows, and asks a token exactly when the document says', async () => {
    const a = await newAccount(api.url);
    for (const op of OPERATIONS) {
      const path = '/v1' + op.path.replace(/:([a-z_]+)/g, 'x');
      const hasBody = ['post', 'put', 'patch'].includes(op.method);
      calls.length = 0;
      const res = await (op.public ? client(api.url) : a.api).request(op.method.toUpperCase(), path, hasBody ? {} : undefined);
      const label = `${op.method.toUpperCase()} ${op.path}`;
      expect({ label, status: res.status }).not.toEqual({ label, status: 500 });
      const bodies = calls.filter((c) => c.kind === 'body').map((c) => c.schema);
      const queries = calls.filter((c) => c.kind === 'query').map((c) => c.schema);
      expect({ label, body: bodies.length ? bodies[0] === op.body?.schema : op.body === undefined }).toEqual({ label, body: true });
      expect({ label, bodies: bodies.length }).toEqual({ label, bodies: op.body ? 1 : 0 });
      expect({ label, query: queries.length ? queries[0] === op.query?.schema : op.query === undefined }).toEqual({ label, query: true });

      const anonymous = await client(api.url).request(op.method.toUpperCase(), path, hasBody ? {} : undefined);
      expect({ label, unauthorized: anonymous.status === 401 }).toEqual({ label, unauthorized: !op.public });
    }
  });

  it('answers a known path asked with another method 405 with Allow, and OPTIONS 204 with Allow', async () => {
    const a = await newAccount(api.url);
    const put = await a.api.put('/v1/customers', {});
    expect(put.status).toBe(405);
    expect(put.body.error.code).toBe('method_not_allowed');
    expect(put.headers.get('allow')).toBe('HEAD, GET, POST');
    const anonymous = await client(api.url).request('DELETE', '/v1/invoices');
    expect(anonymous.status).toBe(405);
    const options = await client(api.url).request('OPTIONS', '/v1/customers/cust_x');
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('HEAD, GET, PATCH, DELETE');
    expect((await a.api.get('/v1/nothing')).status).toBe(404);
  });

  it("renders every resource as the document's response schemas say", async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const checked = new Set<string>();
    const check = (method: string, path: string, res: { status: number; body: unknown }) => {
      const o = operationOf(method, path);
      const response = o.responses[String(res.status)];
      expect({ path, status: res.status, documented: !!response }).toEqual({ path, status: res.status, documented: true });
      const schema = response.content?.['application/json']?.schema;
      if (!schema) return;
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/')));
      const ok = validate(res.body);
      expect({ path, status: res.status, errors: ok ? null : validate.errors }).toEqual({ path, status: res.status, errors: null });
      checked.add(`${method} ${path} ${res.status}`);
    };

    const a = await newAccount(api.url);
    const { customer, wallet } = await customerWithWallet(a.api);
    check('get', '/customers/:id', await a.api.get(`/v1/customers/${customer.id}`));
    check('patch', '/customers/:id', await a.api.patch(`/v1/customers/${customer.id}`, { first_name: 'Ada' }));
    check('get', '/customers', await a.api.get('/v1/customers'));
    const product = await a.api.post('/v1/products', { name: 'Plan' });
    check('post', '/products', product);
    const monthly = await a.api.post('/v1/prices', { product_id: product.body.id, amount: 1999, recurring: { interval: 'month', interval_count: 1 } });
    check('post', '/prices', monthly);
    const once = await a.api.post('/v1/prices', { product_id: product.body.id, amount: 500 });
    check('post', '/prices', once);
    check('get', '/prices', await a.api.get('/v1/prices'));
    const invoice = await a.api.post('/v1/invoices', { customer_id: customer.id, due_date: '2030-01-31', line_items: [{ price_id: once.body.id, quantity: 2 }] });
    check('post', '/invoices', invoice);
    check('get', '/invoices', await a.api.get('/v1/invoices'));
    check('get', '/invoices/:id', await a.api.get(`/v1/invoices/${invoice.body.id}`));
    const invoiceSecret = invoice.body.hosted_invoice_url.split('/invoice/')[1];
    check('get', '/public/invoices/:secret', await client(api.url).get(`/v1/public/invoices/${invoiceSecret}`));
    check('get', '/public/invoices/:secret', await client(api.url).get(`/v1/public/invoices/${'x'.repeat(43)}`));
    const today = new Date().toISOString().slice(0, 10);
    const sub = await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: today, items: [{ price_id: monthly.body.id, overridden_price_amount: '15.00' }] }] });
    check('post', '/subscriptions', sub);
    check('get', '/subscriptions/:id/timeline', await a.api.get(`/v1/subscriptions/${sub.body.id}/timeline`));
    check('get', '/wallets', await a.api.get('/v1/wallets'));
    const address = await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
    check('post', '/crypto_addresses', address);
    check('get', '/wallets/:id', await a.api.get(`/v1/wallets/${wallet.id}`));
    const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: address.body.id, amount: '0.0002', currency_code: 'BTC', transaction_id: txHash() });
    check('post', '/crypto_transactions', tx);
    check('get', '/crypto_transactions/:id', await a.api.get(`/v1/crypto_transactions/${tx.body.id}`));
    const link = await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: 2 });
    check('post', '/payment_claim_links', link);
    const secret = link.body.link.split('/pay/')[1];
    check('get', '/public/payment_claim_links/:secret', await client(api.url).get(`/v1/public/payment_claim_links/${secret}`));
    const claim = await client(api.url).post(`/v1/public/payment_claim_links/${secret}/claims`, { transaction_id: txHash(), amount: '0.001', currency: 'BTC', to_address: BTC_BECH32 });
    check('post', '/public/payment_claim_links/:secret/claims', claim);
    check('post', '/crypto_payment_claims/:id/rejection', await a.api.post(`/v1/crypto_payment_claims/${claim.body.id}/rejection`, {}));
    check('get', '/crypto_payment_claims', await a.api.get('/v1/crypto_payment_claims'));
    const endpoint = await a.api.post('/v1/webhook_endpoints', { url: 'https://hooks.example.com/in', subscriptions: ['*'] });
    check('post', '/webhook_endpoints', endpoint);
    check('put', '/webhook_endpoints/:id', await a.api.put(`/v1/webhook_endpoints/${endpoint.body.id}`, { description: 'main' }));
    check('post', '/webhook_endpoints/:id/regenerate_secret', await a.api.post(`/v1/webhook_endpoints/${endpoint.body.id}/regenerate_secret`));
    check('get', '/webhook_endpoints/:id/events', await a.api.get(`/v1/webhook_endpoints/${endpoint.body.id}/events`));
    check('get', '/me', await a.api.get('/v1/me'));
    check('get', '/accounts', await a.api.get('/v1/accounts'));
    check('post', '/auth', await client(api.url).post('/v1/auth', { email: a.email, password: a.password }));
    // Errors: structured everywhere, simple on POST /auth.
    check('get', '/customers/:id', await a.api.get('/v1/customers/cust_missing'));
    check('post', '/customers', await a.api.post('/v1/customers', { email: 'not an email' }));
    check('post', '/customers', await a.api.post('/v1/customers', {}));
    check('get', '/customers', await client(api.url).get('/v1/customers'));
    check('post', '/auth', await client(api.url).post('/v1/auth', { email: a.email, password: 'wrong password' }));
    check('delete', '/customers/:id', await a.api.del(`/v1/customers/${customer.id}`));
    expect(checked.size).toBeGreaterThanOrEqual(25);
  });
});
