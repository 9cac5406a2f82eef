import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf } from '../context';
import { compile, compileQuery, idParam, s } from '../validation';
import { CLAIM_STATUSES, ClaimStatus } from '../../models/paymentClaim';
import { approvePaymentClaim, getPaymentClaim, listPaymentClaims, rejectPaymentClaim } from '../../services/crypto/paymentClaims';
import { ApiError } from '../../lib/errors';

export const listQuery = compileQuery<{ page: number; status?: ClaimStatus }>({
  type: 'object',
  properties: { page: s.page, status: { type: 'string', enum: CLAIM_STATUSES } },
});

export const rejectionBody = compile<{ reason?: string | null }>({
  type: 'object',
  properties: { reason: { type: ['string', 'null'], maxLength: 5000 } },
});

const userOf = (ctx: Ctx): number => {
  const auth = ctx.state.auth;
  if (!auth) throw ApiError.unauthenticated();
  return auth.userId;
};

export function paymentClaimRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/crypto_payment_claims', async (ctx: Ctx) => {
    const { page, ...filter } = listQuery(ctx.query);
    ctx.body = await listPaymentClaims(scopeOf(ctx), page, filter);
  });
  router.get('/crypto_payment_claims/:id', async (ctx: Ctx) => {
    ctx.body = await getPaymentClaim(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/crypto_payment_claims/:id/approval', async (ctx: Ctx) => {
    ctx.body = await approvePaymentClaim(deps, scopeOf(ctx), userOf(ctx), idParam(ctx.params.id));
  });
  router.post('/crypto_payment_claims/:id/rejection', async (ctx: Ctx) => {
    const { reason } = rejectionBody(ctx.request.body);
    ctx.body = await rejectPaymentClaim(scopeOf(ctx), userOf(ctx), idParam(ctx.params.id), reason ?? undefined);
  });
}
