/**
 * The one error type of the API. Services throw it; the error middleware renders it in the
 * structured format of docs/adr/0105-error-bodies.md (plus the field-errors map for model validation failures).
 */
export type ErrorType = 'invalid_request_error' | 'api_error' | 'authentication_error' | 'address_error';

export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly fieldErrors?: FieldErrors,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  static notFound(message: string, param: string | null = null): ApiError {
    return new ApiError(404, 'invalid_request_error', 'resource_not_found', message, param);
  }

  static missing(param: string): ApiError {
    return new ApiError(400, 'invalid_request_error', 'parameter_missing', `Missing required parameter: ${param}`, param);
  }

  static invalid(message: string, param: string | null = null, fieldErrors?: FieldErrors): ApiError {
    return new ApiError(422, 'invalid_request_error', 'parameter_invalid', message, param, fieldErrors);
  }

  /** A model validation failure: 422 with both the structured body and the field-errors map. */
  static validation(field: string, message: string, param: string = field): ApiError {
    const human = `${field.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())} ${message}`;
    return ApiError.invalid(human, param, { [field]: [message] });
  }

  static unauthenticated(): ApiError {
    return new ApiError(401, 'authentication_error', 'invalid_credentials', 'Invalid or missing API token');
  }

  static addressInvalid(message: string, param = 'address'): ApiError {
    return new ApiError(422, 'address_error', 'address_invalid', message, param);
  }

  static external(message: string): ApiError {
    return new ApiError(502, 'api_error', 'external_api_error', message);
  }

  /**
   * The database could not be reached within DB_UNAVAILABLE_TIMEOUT_MS. Nothing is kept for an
   * Idempotency-Key (a 5xx), so the same request may be sent again with the same key.
   */
  static databaseUnavailable(retryAfterSeconds = 5): ApiError {
    return new ApiError(
      503,
      'api_error',
      'service_unavailable',
      'The database is unavailable; retry later (safe with the same Idempotency-Key)',
      null,
      undefined,
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }

  static conflict(code: string, message: string, param: string | null = null): ApiError {
    return new ApiError(409, 'invalid_request_error', code, message, param);
  }
}

/** Simple-format error (`{error: string}`), used only by POST /v1/auth. */
export class AuthFlowError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

