import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { idParam, pageQuery } from '../validation';
import { createPriceBody, updatePriceBody } from './schema';
import { createPrice, deletePrice, getPrice, listPrices, updatePrice } from '../../services/billing/prices';

export function priceRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/prices', async (ctx: Ctx) => {
    ctx.body = await listPrices(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/prices/:id', async (ctx: Ctx) => {
    ctx.body = await getPrice(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/prices', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createPrice(scopeOf(ctx), createPriceBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.patch('/prices/:id', async (ctx: Ctx) => {
    ctx.body = await updatePrice(scopeOf(ctx), idParam(ctx.params.id), updatePriceBody(ctx.request.body));
  });
  router.delete('/prices/:id', async (ctx: Ctx) => {
    await deletePrice(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
}
