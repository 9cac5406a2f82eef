import type { RouteModule } from '../routeDeps';
import { invoiceRoutes } from '../invoices/routes';
import { subscriptionRoutes } from '../subscriptions/routes';
import { reportRoutes } from '../reports/routes';

/** Authenticated routers of the billing domain, mounted under /v1 and /api/v1. */
export const billingResources: RouteModule[] = [invoiceRoutes, subscriptionRoutes, reportRoutes];
