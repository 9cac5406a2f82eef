import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { idParam } from '../validation';
import { createInvoiceBody, listInvoicesQuery, updateInvoiceBody } from './schema';
import { createInvoice, deleteInvoice, getInvoice, listInvoices } from '../../services/billing/invoices';
import { updateInvoice } from '../../services/billing/invoiceChanges';

export function invoiceRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/invoices', async (ctx: Ctx) => {
    const { page, ...filter } = listInvoicesQuery(ctx.query);
    ctx.body = await listInvoices(deps, scopeOf(ctx), page, filter);
  });
  router.get('/invoices/:id', async (ctx: Ctx) => {
    ctx.body = await getInvoice(deps, scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/invoices', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createInvoice(deps, scopeOf(ctx), createInvoiceBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.patch('/invoices/:id', async (ctx: Ctx) => {
    ctx.body = await updateInvoice(deps, scopeOf(ctx), idParam(ctx.params.id), updateInvoiceBody(ctx.request.body));
  });
  router.delete('/invoices/:id', async (ctx: Ctx) => {
    await deleteInvoice(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
}
