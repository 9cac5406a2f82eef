import type { RouteModule } from '../routeDeps';
import { cryptoAddressRoutes } from '../cryptoAddresses/routes';
import { cryptoTransactionRoutes } from '../cryptoTransactions/routes';
import { paymentClaimLinkRoutes } from '../paymentClaimLinks/routes';
import { paymentClaimRoutes } from '../paymentClaims/routes';
import { publicClaimRoutes } from '../publicClaims/routes';
import { payPageRoutes } from '../pages/payPage';

/** Authenticated routers of the crypto domain, mounted under /v1 and /api/v1. */
export const cryptoResources: RouteModule[] = [cryptoAddressRoutes, cryptoTransactionRoutes, paymentClaimLinkRoutes, paymentClaimRoutes];
/** Unauthenticated routers under /v1: the customer's side of payment claim links. */
export const cryptoPublicResources: RouteModule[] = [publicClaimRoutes];
/** Routes outside /v1: the payment page at /pay/<secret>. */
export const cryptoPages: RouteModule[] = [payPageRoutes];
