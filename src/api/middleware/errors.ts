/**
 * The one error middleware. ApiError -> structured body (+ field-errors map);
 * body-parser failures -> 400/413; the database unreachable -> 503 `service_unavailable`;
 * anything else -> 500 with no internal detail.
 */
import type { Next } from 'koa';
import type { Logger } from 'pino';
import { ApiError, AuthFlowError } from '../../lib/errors';
import { isDatabaseUnavailable } from '../../models/errors';
import type { Ctx } from '../context';

export function renderError(err: ApiError, docBase: string) {
  return {
    error: {
      type: err.type,
      code: err.code,
      message: err.message,
      param: err.param,
      timestamp: new Date().toISOString(),
      doc_url: `${docBase}/docs/errors#${err.code}`,
    },
    ...(err.fieldErrors ? { errors: err.fieldErrors } : {}),
  };
}

function fromUnknown(err: unknown): ApiError | null {
  if (isDatabaseUnavailable(err)) return ApiError.databaseUnavailable();
  const e = err as { status?: number; type?: string; expose?: boolean };
  if (e?.status === 413) {
    return new ApiError(413, 'invalid_request_error', 'parameter_invalid', 'Request body is larger than 1 MiB');
  }
  if (e?.status === 400 || e?.status === 415) {
    return new ApiError(400, 'invalid_request_error', 'parameter_invalid', 'Request body is not valid JSON');
  }
  return null;
}

export function errorMiddleware(logger: Logger, docBase: string) {
  return async (ctx: Ctx, next: Next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof AuthFlowError) {
        ctx.status = err.status;
        ctx.body = { error: err.message };
        return;
      }
      const apiError = err instanceof ApiError ? err : fromUnknown(err);
      if (apiError) {
        // An outage is logged once per request, without a stack: it is the database's state, not a bug.
        if (apiError.code === 'service_unavailable') logger.warn({ err: String(err), requestId: ctx.state.requestId }, 'database unavailable');
        ctx.status = apiError.status;
        ctx.body = renderError(apiError, docBase);
        if (apiError.headers) ctx.set(apiError.headers);
        return;
      }
      logger.error({ err, requestId: ctx.state.requestId }, 'unexpected error');
      ctx.status = 500;
      ctx.body = renderError(new ApiError(500, 'api_error', 'internal_server_error', 'An unexpected error occurred'), docBase);
    }
  };
}
