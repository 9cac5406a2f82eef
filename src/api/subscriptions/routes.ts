import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { idParam, pageQuery } from '../validation';
import { createSubscriptionBody, updateSubscriptionBody } from './schema';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  updateSubscription,
} from '../../services/billing/subscriptions';
import { subscriptionTimeline } from '../../services/billing/subscriptionTimeline';

export function subscriptionRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/subscriptions', async (ctx: Ctx) => {
    ctx.body = await listSubscriptions(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/subscriptions/:id', async (ctx: Ctx) => {
    ctx.body = await getSubscription(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.get('/subscriptions/:id/timeline', async (ctx: Ctx) => {
    ctx.body = await subscriptionTimeline(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/subscriptions', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createSubscription(deps, scopeOf(ctx), createSubscriptionBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.patch('/subscriptions/:id', async (ctx: Ctx) => {
    ctx.body = await updateSubscription(deps, scopeOf(ctx), idParam(ctx.params.id), updateSubscriptionBody(ctx.request.body));
  });
  router.delete('/subscriptions/:id', async (ctx: Ctx) => {
    await deleteSubscription(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
}
