/**
 * The human reference: `/docs` (every operation and schema of the OpenAPI document, no script, a
 * strict CSP) and `/docs/errors`, where every `doc_url` lands on an anchor of its code, for the
 * spec's codes and for every code thrown anywhere in src.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { ERROR_CODES } from '../../src/lib/errorCodes';
import { openapiDocument } from '../../src/api/openapi/document';
import { STYLE } from '../../src/api/docs/render';

const SPEC_CODES = [
  'resource_not_found',
  'parameter_missing',
  'parameter_invalid',
  'invalid_credentials',
  'address_invalid',
  'rate_limit_error',
  'verification_failed',
  'external_api_error',
  'internal_server_error',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Codes given to an ApiError anywhere in src: `new ApiError(status, type, 'code', ...)` and `ApiError.conflict('code', ...)`. */
function thrownCodes(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/new ApiError\(\s*[^,()]+,\s*['"`][a-z_]+['"`],\s*['"`]([a-z_]+)['"`]/g, /ApiError\.conflict\(\s*['"`]([a-z_]+)['"`]/g];
  for (const file of sourceFiles(join(__dirname, '../../src'))) {
    const text = readFileSync(file, 'utf8');
    for (const re of patterns) for (const m of text.matchAll(re)) found.set(m[1], file);
  }
  return found;
}

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('/docs/errors', () => {
  it('lists every code thrown in src (found by scanning the sources) in the registry', () => {
    const thrown = thrownCodes();
    // The scan itself works: codes of the static helpers and of conflicts elsewhere are found.
    expect([...thrown.keys()]).toEqual(expect.arrayContaining(['resource_not_found', 'parameter_missing', 'invalid_credentials', 'idempotency_conflict', 'invoice_changed', 'allocation_in_progress']));
    const missing = [...thrown].filter(([code]) => !(code in ERROR_CODES)).map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });

  it('has an anchor for every code of the spec and of the registry', async () => {
    const res = await client(api.url).get('/docs/errors');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = res.body as string;
    for (const code of [...SPEC_CODES, ...Object.keys(ERROR_CODES)]) {
      expect({ code, anchored: html.includes(`<section class="code" id="${code}">`) }).toEqual({ code, anchored: true });
    }
    // The document's error schema knows the same codes.
    const doc = openapiDocument() as any;
    expect(doc.components.schemas.Error.properties.error.properties.code.enum.sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it("resolves the doc_url of real errors to that page's anchor", async () => {
    const a = await newAccount(api.url);
    const errors = [
      await client(api.url).get('/v1/customers'),
      await a.api.get('/v1/customers/cust_missing'),
      await a.api.post('/v1/customers', {}),
      await a.api.post('/v1/customers', { email: 'nope' }),
      await a.api.put('/v1/customers', {}),
    ];
    const html = (await client(api.url).get('/docs/errors')).body as string;
    for (const res of errors) {
      const url = new URL(res.body.error.doc_url);
      expect(url.pathname).toBe('/docs/errors');
      expect(url.hash).toBe(`#${res.body.error.code}`);
      expect((await client(api.url).get(url.pathname)).status).toBe(200);
      expect(html).toContain(`id="${res.body.error.code}"`);
    }
  });
});

describe('/docs', () => {
  it('renders every operation, parameter and schema of the OpenAPI document, without any script', async () => {
    const res = await client(api.url).get('/docs');
    expect(res.status).toBe(200);
    const html = res.body as string;
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    const doc = openapiDocument() as any;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        expect(html).toContain(`id="op-${op.operationId}"`);
        expect(html).toContain(`${method.toUpperCase()}</span> <code>/v1${path}</code>`);
        for (const p of op.parameters ?? []) if (p.name) expect(html).toContain(`<code>${p.name}</code>`);
      }
    }
    for (const name of Object.keys(doc.components.schemas)) expect(html).toContain(`id="schema-${name}"`);
    // Body fields of a create, nested ones in the spec's param style.
    expect(html).toContain('<code>line_items[][price_id]</code>');
    expect(html).toContain('<code>phases[][items][][overridden_price_amount]</code>');
  });

  it('is served with a CSP that allows no script and only its own stylesheet (by hash)', async () => {
    for (const path of ['/docs', '/docs/errors']) {
      const res = await client(api.url).get(path);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toMatch(/script-src|unsafe-inline|unsafe-eval/);
      expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`);
      expect(res.body).toContain(`<style>${STYLE}</style>`);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});
