/**
 * ajv schemas for every body and query. A failed check becomes an ApiError:
 * a missing required property is 400 parameter_missing, anything else 422 parameter_invalid
 * with the field-errors map beside the structured body.
 */
import Ajv, { ErrorObject, JSONSchemaType, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError } from '../lib/errors';
import { MAX_PAGE } from '../lib/pagination';

export const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true, useDefaults: true, coerceTypes: false });
addFormats(ajv);

const queryAjv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true, useDefaults: true, coerceTypes: true });
addFormats(queryAjv);

/** `/line_items/0/price_id` + `x` -> `line_items[][price_id][x]`, the spec's nested param style. */
export function paramName(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (extra !== undefined) parts.push(extra);
  if (parts.length === 0) return '';
  return parts
    .map((p, i) => (i === 0 ? p : /^\d+$/.test(p) ? '[]' : `[${p}]`))
    .join('');
}

function toApiError(err: ErrorObject): ApiError {
  if (err.keyword === 'required') {
    return ApiError.missing(paramName(err.instancePath, (err.params as { missingProperty: string }).missingProperty));
  }
  if (err.keyword === 'additionalProperties') {
    const extra = (err.params as { additionalProperty: string }).additionalProperty;
    const param = paramName(err.instancePath, extra);
    return ApiError.invalid(`Unknown parameter: ${param}`, param, { [param]: ['is not a known parameter'] });
  }
  const param = paramName(err.instancePath) || null;
  const field = param ?? 'body';
  let message = err.message ?? 'is invalid';
  if (err.keyword === 'enum') message = `must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  if (err.keyword === 'type' && param === null) message = 'must be a JSON object';
  // `{not: {}}` marks a known field that cannot be set on this route (e.g. a price's amount).
  if (err.keyword === 'not') message = 'cannot be changed after creation';
  return ApiError.invalid(`${param ?? 'Request body'} ${message}`, param, { [field]: [message] });
}

/** A compiled check; `schema` is the very object it validates with (the OpenAPI document shows it). */
export type Validator<T> = ((data: unknown) => T) & { readonly schema: object };

/**
 * The path of the first string holding a NUL character, if any. PostgreSQL (under FerretDB) cannot
 * store or compare one in jsonb, so such a value would fail deep in a query or a write (a 500);
 * it is refused up front instead (found by the contract fuzzer).
 */
export function nulPath(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const found = nulPath(v, `${path}/${Array.isArray(value) ? k : k.replace(/\u0000/g, '')}`);
      if (found !== null) return found;
    }
  }
  return null;
}

function refuseNul(value: unknown) {
  const at = nulPath(value);
  if (at === null) return;
  const param = paramName(at) || null;
  throw ApiError.invalid(`${param ?? 'Request body'} must not contain NUL characters`, param, { [param ?? 'body']: ['must not contain NUL characters'] });
}

export function compile<T>(schema: JSONSchemaType<T> | object): Validator<T> {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return Object.assign((data: unknown) => {
    // No body at all reads as {}; an explicit JSON `null` is a body that is not an object.
    const body = data === undefined ? {} : data;
    if (!validate(body)) throw toApiError(validate.errors![0]);
    refuseNul(body);
    return body as T;
  }, { schema });
}

export function compileQuery<T>(schema: object): Validator<T> {
  const validate = queryAjv.compile(schema) as ValidateFunction<T>;
  return Object.assign((data: unknown) => {
    const query = { ...(data as object) };
    if (!validate(query)) throw toApiError(validate.errors![0]);
    refuseNul(query);
    return query as T;
  }, { schema });
}

/** Reusable schema fragments. */
export const s = {
  // No NUL: PostgreSQL cannot hold one (see refuseNul); said in the schema so a filter with one is not a valid request.
  id: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[^\\u0000]*$' },
  name: { type: 'string', maxLength: 500 },
  text: { type: 'string', maxLength: 5000 },
  email: { type: 'string', maxLength: 254 },
  // Checked per currency by the service (cryptocurrency/transactionHashes.ts): the currency is another field.
  transactionHash: {
    type: 'string', minLength: 1, maxLength: 200,
    description: 'The transaction hash. BTC: 64 hex digits (a `0x` prefix is stripped); ETH: `0x` + 64 hex digits (`0X` or no prefix accepted). Stored lowercase; anything else: 422 `parameter_invalid`.',
  },
  page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
  pageQuery: {
    type: 'object',
    properties: { page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 } },
  },
} as const;

export const pageQuery = compileQuery<{ page: number }>(s.pageQuery);

/** Route ids are opaque strings; anything absurdly long is simply not found. */
export function idParam(value: string | undefined): string {
  return typeof value === 'string' && value.length <= 100 ? value : '';
}
