import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { compile, idParam, pageQuery, s } from '../validation';
import { CryptoAddressInput, createCryptoAddress, deleteCryptoAddress, getCryptoAddress, listCryptoAddresses } from '../../services/crypto/cryptoAddresses';

/**
 * `currency` is the quick-start alias of `currency_code`: one of the two is required, a missing one
 * reads as `currency_code` (each branch repeats the other required fields so they are named first).
 */
export const createBody = compile<CryptoAddressInput>({
  type: 'object',
  required: ['wallet_id', 'address'],
  anyOf: ['currency_code', 'currency'].map((c) => ({
    type: 'object',
    required: ['wallet_id', 'address', c],
    properties: { wallet_id: true, address: true, [c]: true },
  })),
  properties: {
    wallet_id: s.id,
    currency_code: { type: 'string', maxLength: 20 },
    currency: { type: 'string', maxLength: 20 },
    address: { type: 'string', maxLength: 200 },
  },
});

export function cryptoAddressRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/crypto_addresses', async (ctx: Ctx) => {
    ctx.body = await listCryptoAddresses(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/crypto_addresses/:id', async (ctx: Ctx) => {
    ctx.body = await getCryptoAddress(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/crypto_addresses', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createCryptoAddress(scopeOf(ctx), createBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.delete('/crypto_addresses/:id', async (ctx: Ctx) => {
    await deleteCryptoAddress(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
}
