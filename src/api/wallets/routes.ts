import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { scopeOf } from '../context';
import { idParam, pageQuery } from '../validation';
import { getWallet, listWallets } from '../../services/crypto/wallets';

/** Read-only: wallets are created with accounts and customers. */
export function walletRoutes(router: Router<AppState>) {
  router.get('/wallets', async (ctx: Ctx) => {
    ctx.body = await listWallets(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/wallets/:id', async (ctx: Ctx) => {
    ctx.body = await getWallet(scopeOf(ctx), idParam(ctx.params.id));
  });
}
