import type { RouteModule } from '../app';

/** Authenticated routers of the billing domain, mounted under /v1 and /api/v1. */
export const billingResources: RouteModule[] = [];
/** Unauthenticated routers under /v1 (none unless stated). */
export const billingPublicResources: RouteModule[] = [];
/** Routes outside /v1 (pages). */
export const billingPages: RouteModule[] = [];
