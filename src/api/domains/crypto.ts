import type { RouteModule } from '../app';

/** Authenticated routers of the crypto domain, mounted under /v1 and /api/v1. */
export const cryptoResources: RouteModule[] = [];
/** Unauthenticated routers under /v1 (none unless stated). */
export const cryptoPublicResources: RouteModule[] = [];
/** Routes outside /v1 (pages). */
export const cryptoPages: RouteModule[] = [];
