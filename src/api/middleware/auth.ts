import type { Next } from 'koa';
import { ApiError } from '../../lib/errors';
import { resolveToken, TokenReader } from '../../services/accounts/accounts';
import type { Ctx } from '../context';

/** `Authorization: Bearer <token>` or `token <token>` (also `Token token="<token>"`). */
export function parseAuthorization(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^(?:bearer|token)\s+(?:token="?)?([^\s"]+)"?\s*$/i.exec(header.trim());
  return m ? m[1] : null;
}

/** Resolves the request's token through `readToken` (the app's shared reader). */
export function authMiddleware(readToken: TokenReader) {
  return async (ctx: Ctx, next: Next) => {
    const token = parseAuthorization(ctx.get('Authorization'));
    const auth = token ? await resolveToken(token, readToken) : null;
    if (!auth) throw ApiError.unauthenticated();
    ctx.state.auth = auth;
    await next();
  };
}
