import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { compile, idParam, pageQuery } from '../validation';
import { getAccount, listAccounts, renameAccount } from '../../services/accounts/accounts';

export const updateAccountBody = compile<{ name: string }>({
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', maxLength: 200 } },
});

/** Accounts are created by the CLI; the API lists, shows and renames the user's accounts. */
export function accountRoutes(router: Router<AppState>) {
  router.get('/accounts', async (ctx: Ctx) => {
    ctx.body = await listAccounts(ctx.state.auth!, pageQuery(ctx.query).page);
  });
  router.get('/accounts/:id', async (ctx: Ctx) => {
    ctx.body = await getAccount(ctx.state.auth!, idParam(ctx.params.id));
  });
  router.patch('/accounts/:id', async (ctx: Ctx) => {
    ctx.body = await renameAccount(ctx.state.auth!, idParam(ctx.params.id), updateAccountBody(ctx.request.body).name);
  });
}
