/**
 * The OpenAPI 3.1 description of /v1, built from OPERATIONS: request bodies and query parameters
 * are the very schema objects the routes validate with (src/api/validation.ts keeps them on each
 * validator), responses are the presenters' schemas (src/presenters/schemas.ts), and every error
 * a route can answer is the one structured body with the codes of src/lib/errorCodes.ts.
 */
import { ERROR_CODES, ErrorCode } from '../../lib/errorCodes';
import { listOf, RESOURCE_SCHEMAS } from '../../presenters/schemas';
import { Operation, OPERATIONS } from './operations';

type Json = Record<string, unknown>;

export const API_VERSION = '1.0.0';

/** `/customers/:id` -> `/customers/{id}`. */
export function openapiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}

const TAGS: Record<string, string> = {
  Authentication: 'Tokens: `POST /v1/auth` makes one from email and password; every other operation needs one.',
  Reference: 'This document.',
  Accounts: 'Accounts are created by the operator CLI; the API lists, shows and renames those of the user.',
  Customers: 'Customers of the account. Creating one also creates its wallet.',
  Products: 'What is sold.',
  Prices: 'One-time or recurring prices of a product, in integer cents.',
  Wallets: 'Read-only: one per account scope and one per customer.',
  Invoices: 'Standalone invoices and those subscriptions generate. Each has a hosted page and a PDF behind an unguessable link (`hosted_invoice_url`, `invoice_pdf`).',
  Subscriptions: 'Multi-phase subscriptions, billed in advance on their billing dates.',
  Reports: 'Finance reports of the scope: MRR, receivables aging, collections. JSON, or CSV with `Accept: text/csv`.',
  'Crypto addresses': 'BTC and ETH addresses in wallets; payments to them are detected on chain.',
  'Crypto transactions': 'Payments, detected on chain or entered by hand, and their allocation to invoices.',
  'Payment claim links': 'Links a customer opens to tell about a payment.',
  'Payment claims': 'What customers submitted through links, to approve or reject.',
  'Public payment pages': "The unauthenticated calls behind the payment page `/pay/<secret>` and an invoice's hosted page `/invoice/<secret>`.",
  'Webhook endpoints': 'HTTPS endpoints that receive signed events, and their deliveries.',
};

/** What each error status means and which codes it carries. */
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: a required parameter is missing (`parameter_missing`) or the body is not valid JSON (`parameter_invalid`)',
  401: 'Missing, invalid or revoked token (`invalid_credentials`)',
  404: 'Not found in this account and scope (`resource_not_found`)',
  409: 'Conflict: retry later',
  413: 'Body larger than 1 MiB (`parameter_invalid`)',
  422: 'Invalid value or failed validation',
  429: 'Rate limit exceeded (`rate_limit_error`): wait `Retry-After` seconds',
  500: 'Unexpected error (`internal_server_error`)',
  502: 'External dependency failed (`external_api_error`)',
  503: 'The database is unavailable (`service_unavailable`): retry after `Retry-After` seconds, with the same `Idempotency-Key`',
};

function codesFor(status: number): ErrorCode[] {
  return (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => (ERROR_CODES[c].statuses as readonly number[]).includes(status));
}

function errorResponseName(status: number, simple: boolean): string {
  return simple ? `AuthError${status}` : `Error${status}`;
}

/** Every error status the operation can answer, by what every operation of its kind can meet. */
export function errorStatuses(op: Operation): number[] {
  // Any operation that reads or writes the database answers 503 while it is unreachable.
  const out = new Set<number>([500, 503]);
  if (!op.public) {
    out.add(401);
    out.add(429);
  }
  if (op.path.startsWith('/public/')) out.add(429);
  // A path id, or an id in the body (`customer_id`, `line_items[][price_id]`, a currency code), may name nothing.
  if (pathParams(op.path).length > 0 || (op.body && referencesSomething(op.body.schema))) out.add(404);
  if (op.query) out.add(422);
  if (op.method === 'post' || op.method === 'put' || op.method === 'patch') {
    // Malformed JSON (400) and a body over 1 MiB (413) reach every route that reads a body.
    out.add(400);
    out.add(413);
    out.add(422);
    // Idempotency-Key: a key still in flight is a 409, the same key for another request a 422.
    if (op.method === 'post' && !op.public) out.add(409);
  }
  for (const s of op.errors ?? []) out.add(s);
  if (op.path === '/openapi.json') return [500];
  return [...out].sort((a, b) => a - b);
}

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Whether a body schema has a field that names another resource (`*_id`) or a currency code (unknown: 404). */
export function referencesSomething(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const props = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  for (const [name, prop] of Object.entries(props)) {
    if (/_id$/.test(name) || name === 'currency_code' || name === 'currency') return true;
    if (referencesSomething(prop)) return true;
  }
  const items = (schema as { items?: unknown }).items;
  return items ? referencesSomething(items) : false;
}

/**
 * Links from a create (201 with an `id`) to every operation on that id (`<path>/:id...`), so a
 * client, and the fuzzer's stateful phase, can follow a new resource through its life.
 */
function linksFrom(op: Operation): Json | undefined {
  const links: Json = {};
  if (op.method === 'post' && op.success.status === 201 && typeof op.success.schema === 'string') {
    const prefix = `${op.path}/:id`;
    for (const t of OPERATIONS.filter((t) => t.path === prefix || t.path.startsWith(`${prefix}/`))) {
      links[t.operationId] = { operationId: t.operationId, parameters: { id: '$response.body#/id' }, description: `${t.summary}: the new resource` };
    }
  }
  for (const l of BODY_LINKS[op.operationId] ?? []) {
    links[l.operationId] = { operationId: l.operationId, requestBody: l.requestBody, description: l.description };
  }
  return Object.keys(links).length ? links : undefined;
}

/** Links that put what one answer returns into another request's body (merged into the rest of it). */
const BODY_LINKS: Record<string, { operationId: string; requestBody: Json; description: string }[]> = {
  create_customer: ['create_invoice', 'create_subscription', 'create_payment_claim_link'].map((operationId) => ({
    operationId,
    requestBody: { customer_id: '$response.body#/id' },
    description: 'For the new customer',
  })),
  create_product: [{ operationId: 'create_price', requestBody: { product_id: '$response.body#/id' }, description: 'A price of the new product' }],
  create_crypto_address: [
    {
      operationId: 'create_crypto_transaction',
      requestBody: { to_address_id: '$response.body#/id', currency_code: '$response.body#/currency' },
      description: 'A payment to the new address',
    },
  ],
  list_wallets: [{ operationId: 'create_crypto_address', requestBody: { wallet_id: '$response.body#/wallets/0/id' }, description: 'An address in the first wallet listed' }],
};

function successResponse(op: Operation): Json {
  const { success } = op;
  if (success.schema === null) return { description: success.description };
  let schema: Json;
  if (success.schema === 'any') schema = { type: 'object' };
  else if (typeof success.schema === 'string') schema = ref('schemas', success.schema);
  else schema = listOf(success.schema.list, success.schema.item);
  const links = linksFrom(op);
  const csv = success.csv ? { 'text/csv': { schema: { type: 'string', description: 'RFC 4180, a header row first' } } } : {};
  return { description: success.description, content: { 'application/json': { schema }, ...csv }, ...(links ? { links } : {}) };
}

function queryParameters(op: Operation): Json[] {
  if (!op.query) return [];
  const schema = op.query.schema as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => ({
    name,
    in: 'query',
    required: (schema.required ?? []).includes(name),
    description: QUERY_TEXT[name] ?? `Filter by ${name.replace(/_/g, ' ')}`,
    schema: prop,
  }));
}

const QUERY_TEXT: Record<string, string> = {
  page: 'Page number, 1-indexed; 25 items a page',
  from: 'First month, `YYYY-MM`',
  to: 'Last month, `YYYY-MM`',
  as_of: 'The day to age on, `YYYY-MM-DD`',
};

function operationObject(op: Operation): Json {
  const parameters: Json[] = pathParams(op.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    description: op.params?.[name] ?? name,
    schema: { type: 'string' },
  }));
  parameters.push(...queryParameters(op));
  if (op.method === 'post' && !op.public) parameters.push(ref('parameters', 'IdempotencyKey'));

  const responses: Json = { [String(op.success.status)]: successResponse(op) };
  for (const status of errorStatuses(op)) {
    // POST /v1/auth: its own failures are simple; body-parser and rate-limit ones are structured.
    const simple = !!op.simpleErrors && [400, 401, 422, 429, 503].includes(status);
    responses[String(status)] = ref('responses', errorResponseName(status, simple));
  }

  const out: Json = {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.public ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
  };
  if (op.body) {
    const schema = op.body.schema as { required?: string[] };
    out.requestBody = {
      required: (schema.required ?? []).length > 0,
      content: { 'application/json': { schema: op.body.schema } },
    };
  }
  out.responses = responses;
  return out;
}

function errorComponents(): { schemas: Json; responses: Json } {
  const codes = Object.keys(ERROR_CODES);
  const schemas: Json = {
    Error: {
      type: 'object',
      description: 'The structured error body. Model validation failures also carry `errors`, the field-errors map.',
      required: ['error'],
      additionalProperties: false,
      properties: {
        error: {
          type: 'object',
          required: ['type', 'code', 'message', 'param', 'timestamp', 'doc_url'],
          additionalProperties: false,
          properties: {
            type: { type: 'string', enum: ['invalid_request_error', 'api_error', 'authentication_error', 'address_error'] },
            code: { type: 'string', enum: codes, description: 'Stable identifier: see `doc_url`' },
            message: { type: 'string', description: 'Human-readable; may change' },
            param: { type: ['string', 'null'], description: 'The offending parameter; nested ones like `line_items[][price_id]`' },
            timestamp: { type: 'string', format: 'date-time' },
            doc_url: { type: 'string', format: 'uri', description: '`<PUBLIC_URL>/docs/errors#<code>`' },
          },
        },
        errors: ref('schemas', 'FieldErrors'),
      },
    },
    FieldErrors: {
      type: 'object',
      description: 'Field name to messages, e.g. `{"email": ["has already been taken"]}`',
      additionalProperties: { type: 'array', items: { type: 'string' } },
    },
    SimpleError: {
      type: 'object',
      description: 'The simple format of `POST /v1/auth`',
      required: ['error'],
      additionalProperties: false,
      properties: { error: { type: 'string' } },
    },
  };
  const responses: Json = {};
  const headersFor = (status: number): Json => (status === 429 || status === 503 ? { headers: { 'Retry-After': ref('headers', 'RetryAfter') } } : {});
  for (const status of Object.keys(STATUS_TEXT).map(Number)) {
    responses[errorResponseName(status, false)] = {
      description: STATUS_TEXT[status] + (codesFor(status).length ? `. Codes: ${codesFor(status).map((c) => `\`${c}\``).join(', ')}` : ''),
      ...headersFor(status),
      content: { 'application/json': { schema: ref('schemas', 'Error') } },
    };
  }
  const authText: Record<number, string> = {
    400: 'A missing field (simple format) or a body that is not JSON (structured)',
    401: 'Wrong email, password or two-factor code',
    422: '`{"error": "otp_attempt_required"}`: two-factor is on and `otp_attempt` is missing',
    429: 'Too many attempts from this client, or failures from this client for this email: retry after the seconds the message says',
    503: 'Too many sign-ins in progress, or the database is unavailable: retry after `Retry-After` seconds',
  };
  for (const status of [400, 401, 422, 429, 503]) {
    responses[errorResponseName(status, true)] = {
      description: authText[status],
      ...headersFor(status),
      content: {
        'application/json': { schema: { anyOf: [ref('schemas', 'SimpleError'), ref('schemas', 'Error')] } },
      },
    };
  }
  return { schemas, responses };
}

let cached: Json | null = null;

/** The document (built once per process: it depends on code only). */
export function openapiDocument(): Json {
  if (cached) return cached;
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) {
    const p = openapiPath(op.path);
    paths[p] = { ...(paths[p] ?? {}), [op.method]: operationObject(op) };
  }
  const errors = errorComponents();
  const usedTags = new Set(OPERATIONS.map((o) => o.tag));
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Invoicing and crypto payments API',
      version: API_VERSION,
      summary: 'Customers, products, prices, invoices, subscriptions, BTC/ETH payments and signed webhooks.',
      description:
        'Every path is relative to `/v1` (also served under `/api/v1`). Bodies are JSON. Lists take `page` ' +
        '(1-indexed, 25 items a page) and answer `{<resource>: [...], pagination: {page, pages, count}}`. ' +
        'Errors are `{error: {type, code, message, param, timestamp, doc_url}}`; each code is explained at `/docs/errors#<code>`. ' +
        'Every authenticated `POST` takes an `Idempotency-Key`. A human-readable reference of this document is at `/docs`.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [
      { url: '/v1', description: 'This host' },
      { url: '/api/v1', description: 'The same API under its alternative prefix' },
    ],
    security: [{ bearerAuth: [] }, { tokenAuth: [] }],
    tags: Object.entries(TAGS)
      .filter(([name]) => usedTags.has(name))
      .map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: '`Authorization: Bearer <API_TOKEN>`: a 32-character hex token from `POST /v1/auth` or the operator CLI.',
        },
        tokenAuth: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The same token with the keyword `token`: `Authorization: token <API_TOKEN>`.',
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a POST safe to retry: the first response to a key is kept 24 hours and replayed (with `Idempotent-Replayed: true`) ' +
            'for the same route and body. 1 to 255 printable ASCII characters.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
        },
      },
      headers: {
        RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
      },
      schemas: { ...RESOURCE_SCHEMAS, ...errors.schemas },
      responses: errors.responses,
    },
  };
  return cached;
}
