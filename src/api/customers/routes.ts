import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { idParam, pageQuery } from '../validation';
import { createCustomerBody, updateCustomerBody } from './schema';
import { createCustomer, getCustomer, listCustomers, updateCustomer } from '../../services/billing/customers';
import { deleteCustomer } from '../../services/billing/customerDeletion';

export function customerRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/customers', async (ctx: Ctx) => {
    ctx.body = await listCustomers(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/customers/:id', async (ctx: Ctx) => {
    ctx.body = await getCustomer(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/customers', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createCustomer(scopeOf(ctx), createCustomerBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.patch('/customers/:id', async (ctx: Ctx) => {
    ctx.body = await updateCustomer(scopeOf(ctx), idParam(ctx.params.id), updateCustomerBody(ctx.request.body));
  });
  router.delete('/customers/:id', async (ctx: Ctx) => {
    await deleteCustomer(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
}
