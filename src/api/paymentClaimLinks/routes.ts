import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { compile, idParam, pageQuery, s } from '../validation';
import {
  PaymentClaimLinkInput,
  createPaymentClaimLink,
  deletePaymentClaimLink,
  getPaymentClaimLink,
  listPaymentClaimLinks,
} from '../../services/crypto/paymentClaimLinks';

/** `max_uses` is any integer here; the service answers the spec's "Max uses must be greater than 0". */
export const createBody = compile<PaymentClaimLinkInput>({
  type: 'object',
  required: ['customer_id'],
  properties: {
    customer_id: s.id,
    expires_at: { type: 'string', maxLength: 40 },
    max_uses: { type: 'integer', maximum: 1_000_000 },
    metadata: { type: ['string', 'null'], maxLength: 5000 },
    price_id: { type: ['string', 'null'], maxLength: 64 },
  },
});

export function paymentClaimLinkRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/payment_claim_links', async (ctx: Ctx) => {
    ctx.body = await listPaymentClaimLinks(deps, scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/payment_claim_links/:id', async (ctx: Ctx) => {
    ctx.body = await getPaymentClaimLink(deps, scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/payment_claim_links', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createPaymentClaimLink(deps, scopeOf(ctx), createBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.delete('/payment_claim_links/:id', async (ctx: Ctx) => {
    await deletePaymentClaimLink(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
}
