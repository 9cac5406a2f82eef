import type { RouteModule } from '../app';
import { invoiceRoutes } from '../invoices/routes';
import { subscriptionRoutes } from '../subscriptions/routes';

/** Authenticated routers of the billing domain, mounted under /v1 and /api/v1. */
export const billingResources: RouteModule[] = [invoiceRoutes, subscriptionRoutes];
/** Unauthenticated routers under /v1 (none). */
export const billingPublicResources: RouteModule[] = [];
/** Routes outside /v1 (none). */
export const billingPages: RouteModule[] = [];
