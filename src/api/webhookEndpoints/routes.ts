import type Router from '@koa/router';
import type { RouteDeps } from '../routeDeps';
import type { AppState, Ctx } from '../context';
import { scopeOf, createOptionsOf } from '../context';
import { idParam, pageQuery } from '../validation';
import { createWebhookEndpointBody, updateWebhookEndpointBody } from './schema';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  redeliverWebhookEvent,
  regenerateWebhookSecret,
  updateWebhookEndpoint,
} from '../../services/webhooks/webhookEndpoints';

export function webhookEndpointRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/webhook_endpoints', async (ctx: Ctx) => {
    ctx.body = await listWebhookEndpoints(scopeOf(ctx), pageQuery(ctx.query).page);
  });
  router.get('/webhook_endpoints/:id', async (ctx: Ctx) => {
    ctx.body = await getWebhookEndpoint(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.post('/webhook_endpoints', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await createWebhookEndpoint(deps, scopeOf(ctx), createWebhookEndpointBody(ctx.request.body), createOptionsOf(ctx));
  });
  router.put('/webhook_endpoints/:id', async (ctx: Ctx) => {
    ctx.body = await updateWebhookEndpoint(deps, scopeOf(ctx), idParam(ctx.params.id), updateWebhookEndpointBody(ctx.request.body));
  });
  router.delete('/webhook_endpoints/:id', async (ctx: Ctx) => {
    await deleteWebhookEndpoint(deps, scopeOf(ctx), idParam(ctx.params.id));
    ctx.status = 204;
  });
  router.post('/webhook_endpoints/:id/regenerate_secret', async (ctx: Ctx) => {
    ctx.body = await regenerateWebhookSecret(scopeOf(ctx), idParam(ctx.params.id));
  });
  router.get('/webhook_endpoints/:id/events', async (ctx: Ctx) => {
    ctx.body = await listWebhookDeliveries(scopeOf(ctx), idParam(ctx.params.id), pageQuery(ctx.query).page);
  });
  router.post('/webhook_endpoints/:id/events/:event_id/redeliver', async (ctx: Ctx) => {
    ctx.status = 201;
    ctx.body = await redeliverWebhookEvent(deps, scopeOf(ctx), idParam(ctx.params.id), idParam(ctx.params.event_id));
  });
}
