import type { ParameterizedContext } from 'koa';
import type { AuthContext } from '../services/accounts/accounts';
import type { Scope } from '../models/scope';
import type { CreateOptions } from '../services/writes/creation';
import { ApiError } from '../lib/errors';

export interface AppState {
  requestId: string;
  auth?: AuthContext;
  /**
   * The Idempotency-Key this request holds (its reservation's id, unique per scope and key, with
   * the request's hash): a create derives its resource's id from it, so a retry that takes over the key of a request
   * that died after its write finds that resource instead of writing a second one.
   */
  idempotencyKeyId?: string;
}

export type Ctx = ParameterizedContext<AppState> & { request: { body?: unknown } };

/** The account and scope of the request's token. */
export function scopeOf(ctx: Ctx): Scope {
  const auth = ctx.state.auth;
  if (!auth) throw ApiError.unauthenticated();
  return { accountId: auth.accountId, sandbox: auth.sandbox };
}

/** What a create passes to its service: the Idempotency-Key the request holds (services/writes/creation.ts). */
export function createOptionsOf(ctx: Ctx): CreateOptions {
  return { idempotencyKeyId: ctx.state.idempotencyKeyId };
}
