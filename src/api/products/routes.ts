import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { idParam, pageQuery } from '../validation';
import { createProductBody, updateProductBody } from './schema';
import { createProduct, deleteProduct, getProduct, listProducts, updateProduct } from '../../services/billing/products';

export function productRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/products', async (ctx: Ctx) => {
    ctx.body = await listProducts(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/products/:id', async (ctx: Ctx) => {
    ctx.body = await getProduct(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/products', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createProduct(scopeOf(ctx), createProductBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.patch('/products/:id', async (ctx: Ctx) => {
    ctx.body = await updateProduct(scopeOf(ctx), idParam(ctx.params.id), updateProductBody(ctx.request.body));
  });
  router.delete('/products/:id', async (ctx: Ctx) => {
    await deleteProduct(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
}
