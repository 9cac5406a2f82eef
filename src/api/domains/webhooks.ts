import type { RouteModule } from '../routeDeps';
import { webhookEndpointRoutes } from '../webhookEndpoints/routes';

/** Authenticated routers of the webhooks domain, mounted under /v1 and /api/v1. */
export const webhooksResources: RouteModule[] = [webhookEndpointRoutes];
