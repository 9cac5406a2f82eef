import type { Next } from 'koa';
import { ApiError } from '../../lib/errors';
import type { Ctx } from '../context';

/**
 * After every router: a path that some route serves, asked with another method, is a 405 with
 * `Allow` (the methods the document lists for it, plus HEAD); OPTIONS answers 204 with `Allow`.
 * Paths no route serves go on to the 404.
 */
export async function methodNotAllowed(ctx: Ctx, next: Next) {
  const matched = (ctx as unknown as { matched?: { methods: string[] }[] }).matched ?? [];
  const methods = [...new Set(matched.flatMap((layer) => layer.methods))];
  if (methods.length === 0) return next();
  const allow = methods.join(', ');
  if (ctx.method === 'OPTIONS') {
    ctx.set('Allow', allow);
    ctx.status = 204;
    return;
  }
  throw new ApiError(405, 'invalid_request_error', 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, null, undefined, {
    Allow: allow,
  });
}
