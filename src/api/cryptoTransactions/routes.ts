import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { compile, idParam, pageQuery, s } from '../validation';
import {
  CryptoTransactionInput,
  createCryptoTransaction,
  createManualAllocation,
  getCryptoTransaction,
  listCryptoTransactions,
} from '../../services/crypto/cryptoTransactions';

/** `currency` is the quick-start alias of `currency_code`: one of the two is required (see cryptoAddresses). */
export const createBody = compile<CryptoTransactionInput>({
  type: 'object',
  required: ['to_address_id', 'amount', 'transaction_id'],
  anyOf: ['currency_code', 'currency'].map((c) => ({
    type: 'object',
    required: ['to_address_id', 'amount', c, 'transaction_id'],
    properties: { to_address_id: true, amount: true, transaction_id: true, [c]: true },
  })),
  properties: {
    to_address_id: s.id,
    amount: { type: 'string', maxLength: 60 },
    currency_code: { type: 'string', maxLength: 20 },
    currency: { type: 'string', maxLength: 20 },
    transaction_id: s.transactionHash,
    timestamp: { type: 'string', maxLength: 40 },
    from_address_id: { type: ['string', 'null'], maxLength: 64 },
  },
});

export const allocationBody = compile<{ invoice_id: string; amount_applied?: string }>({
  type: 'object',
  required: ['invoice_id'],
  properties: { invoice_id: s.id, amount_applied: { type: 'string', maxLength: 20 } },
});

export function cryptoTransactionRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/crypto_transactions', async (ctx: Ctx) => {
    ctx.body = await listCryptoTransactions(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/crypto_transactions/:id', async (ctx: Ctx) => {
    ctx.body = await getCryptoTransaction(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/crypto_transactions', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createCryptoTransaction(deps, scopeOf(ctx), createBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.post('/crypto_transactions/:id/allocations', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createManualAllocation(deps, scopeOf(ctx), idParam(ctx.params.id), allocationBody(ctx.request.body));
  });
}
