import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { scopeOf } from '../context';
import { monthRangeQuery, receivablesQuery } from './schema';
import { collections, mrr, receivables } from '../../services/reports/reports';
import { collectionsCsv, mrrCsv, presentCollections, presentMrrReport, presentReceivables, receivablesCsv } from '../../presenters/reports';

/** JSON by default; CSV when the client asks for `text/csv` (and prefers it to JSON). */
export function wantsCsv(ctx: Ctx): boolean {
  return ctx.accepts('application/json', 'text/csv') === 'text/csv';
}

export function sendCsv(ctx: Ctx, name: string, csv: string) {
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('Content-Disposition', `attachment; filename="${name}.csv"`);
  ctx.body = csv;
}

export function reportRoutes(router: Router<AppState>) {
  router.get('/reports/mrr', async (ctx: Ctx) => {
    const { from, to, months } = await mrr(scopeOf(ctx), monthRangeQuery(ctx.query));
    const r = presentMrrReport(from, to, months);
    if (wantsCsv(ctx)) sendCsv(ctx, `mrr-${r.from}-${r.to}`, mrrCsv(r));
    else ctx.body = r;
  });
  router.get('/reports/receivables', async (ctx: Ctx) => {
    const { asOf, aging } = await receivables(scopeOf(ctx), receivablesQuery(ctx.query));
    if (wantsCsv(ctx)) sendCsv(ctx, `receivables-${asOf}`, receivablesCsv(asOf, aging));
    else ctx.body = presentReceivables(asOf, aging);
  });
  router.get('/reports/collections', async (ctx: Ctx) => {
    const { from, to, result } = await collections(scopeOf(ctx), monthRangeQuery(ctx.query));
    const r = presentCollections(from, to, result);
    if (wantsCsv(ctx)) sendCsv(ctx, `collections-${from}-${to}`, collectionsCsv(r));
    else ctx.body = r;
  });
}
