/**
 * Every `code` a structured error can carry, with its HTTP status(es) and type. The reference
 * page `/docs/errors` has one anchor per entry (every `doc_url` points at one), and a test
 * scans the sources so that a code thrown anywhere is listed here.
 */
import type { ErrorType } from './errors';

export interface ErrorCodeInfo {
  statuses: number[];
  type: ErrorType;
  /** Plain text: what happened and what to do (the reference page shows it). */
  description: string;
}

export const ERROR_CODES = {
  resource_not_found: {
    statuses: [404],
    type: 'invalid_request_error',
    description:
      'The resource does not exist, belongs to another account, or lives in the other scope (production or sandbox). ' +
      'A resource of another account is always a 404, never a 403. Also the answer to an unknown URL. `param` names the identifier ' +
      '(for example `wallet_id`, `customer_id`, `line_items[][price_id]`).',
  },
  parameter_missing: {
    statuses: [400],
    type: 'invalid_request_error',
    description: 'A required parameter is absent from the body. `param` names it, nested ones in the form `line_items[][price_id]`.',
  },
  parameter_invalid: {
    statuses: [400, 413, 422],
    type: 'invalid_request_error',
    description:
      'A value is invalid or failed validation (422), the body is not valid JSON (400, `param` null) or is larger than 1 MiB (413). ' +
      'Validation failures of a model also carry the field-errors map beside the structured error: ' +
      '`{"error": {...}, "errors": {"email": ["has already been taken"]}}`. A reused `Idempotency-Key` with another route or body ' +
      'is a 422 with `param` `Idempotency-Key`.',
  },
  invalid_credentials: {
    statuses: [401],
    type: 'authentication_error',
    description:
      'The API token is missing, malformed, unknown or revoked. Send `Authorization: Bearer <token>` (or `token <token>`). ' +
      '`POST /v1/auth` answers its own failures in the simple format `{"error": "..."}` instead.',
  },
  address_invalid: {
    statuses: [422],
    type: 'address_error',
    description:
      'The crypto address is not valid for its currency: BTC legacy, SegWit or native SegWit with a correct checksum; ' +
      'ETH `0x` and 40 hex characters (mixed case must pass EIP-55). Sandbox scopes also accept test networks.',
  },
  rate_limit_error: {
    statuses: [429],
    type: 'invalid_request_error',
    description:
      'Too many requests in the current one-minute window. Wait for `Retry-After` seconds and back off exponentially. ' +
      'The `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers tell where you stand.',
  },
  verification_failed: {
    statuses: [422],
    type: 'invalid_request_error',
    description:
      'The human-verification (proof-of-work) solution sent with a payment claim is missing, wrong, expired or already used. ' +
      'Fetch the link again for a new challenge and solve it.',
  },
  external_api_error: {
    statuses: [502],
    type: 'api_error',
    description: 'An external dependency (the price oracle) failed. Nothing was changed; retry later.',
  },
  internal_server_error: {
    statuses: [500],
    type: 'api_error',
    description: 'An unexpected error on our side. The body carries no internal detail; retry, and report it if it persists.',
  },
  service_unavailable: {
    statuses: [503],
    type: 'api_error',
    description:
      'The database could not be reached (down or restarting); the request was not completed. Retry after `Retry-After` seconds ' +
      'with the same `Idempotency-Key`: a 5xx is never kept for a key, so the retry runs once the database is back.',
  },
  method_not_allowed: {
    statuses: [405],
    type: 'invalid_request_error',
    description: 'The URL exists but does not take this HTTP method. The `Allow` header lists the methods it takes.',
  },
  idempotency_conflict: {
    statuses: [409],
    type: 'invalid_request_error',
    description:
      'A request with the same `Idempotency-Key` is still being processed. Retry after it finished: you then get its response again.',
  },
  invoice_changed: {
    statuses: [409],
    type: 'invalid_request_error',
    description: 'The invoice changed (for example a payment was applied) while it was being updated. Read it again and retry.',
  },
  resource_changed: {
    statuses: [409],
    type: 'invalid_request_error',
    description: 'Another change to this resource (yours, or the service\'s own, such as an automatic disable) was being written at the same moment. Read it again and retry.',
  },
  allocation_in_progress: {
    statuses: [409],
    type: 'invalid_request_error',
    description: 'The transaction is still being allocated automatically. Retry the manual allocation shortly.',
  },
  allocation_conflict: {
    statuses: [409],
    type: 'invalid_request_error',
    description: 'The transaction or the invoice changed while allocating. Read both again and retry.',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;
