import type { ParameterizedContext } from 'koa';
import type { AuthContext } from '../services/accounts';
import type { Scope } from '../models/scope';
import { ApiError } from '../lib/errors';

export interface AppState {
  requestId: string;
  auth?: AuthContext;
}

export type Ctx = ParameterizedContext<AppState> & { request: { body?: unknown } };

/** The account and scope of the request's token. */
export function scopeOf(ctx: Ctx): Scope {
  const auth = ctx.state.auth;
  if (!auth) throw ApiError.unauthenticated();
  return { accountId: auth.accountId, sandbox: auth.sandbox };
}
