import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { compile, s } from '../validation';
import type { RouteDeps } from '../routeDeps';
import { getPublicPaymentClaimLink } from '../../services/crypto/publicPaymentClaimLinks';
import { PublicClaimInput, submitPaymentClaim } from '../../services/crypto/paymentClaimSubmission';

export const claimBody = compile<PublicClaimInput>({
  type: 'object',
  required: ['transaction_id', 'amount', 'currency', 'to_address'],
  properties: {
    transaction_id: s.transactionHash,
    amount: { type: 'string', maxLength: 60 },
    currency: { type: 'string', maxLength: 20 },
    to_address: { type: 'string', maxLength: 200 },
    verification: { type: ['string', 'null'], maxLength: 4096 },
  },
});

/** Unauthenticated: the customer's side of a payment claim link, rate-limited per client, IPv6 by /64 (one window for both mounts). */
export function publicClaimRoutes(router: Router<AppState>, deps: RouteDeps) {
  const limit = deps.publicClaimLimit;
  router.get('/public/payment_claim_links/:secret', limit, async (ctx: Ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await getPublicPaymentClaimLink(deps, String(ctx.params.secret));
  });
  router.post('/public/payment_claim_links/:secret/claims', limit, async (ctx: Ctx) => {
    const body = claimBody(ctx.request.body);
    ctx.status = 201;
    ctx.body = await submitPaymentClaim(deps, String(ctx.params.secret), { ...body, verification: body.verification ?? undefined });
  });
}
