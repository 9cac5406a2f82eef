import type { RouteModule } from '../routeDeps';
import { cryptoAddressRoutes } from '../cryptoAddresses/routes';
import { cryptoTransactionRoutes } from '../cryptoTransactions/routes';
import { paymentClaimLinkRoutes } from '../paymentClaimLinks/routes';
import { paymentClaimRoutes } from '../paymentClaims/routes';
import { publicClaimRoutes } from '../publicClaims/routes';
import { payPageRoutes } from '../pages/payPage';
import { invoicePageRoutes, publicInvoiceRoutes } from '../publicInvoices/routes';

/** Authenticated routers of the crypto domain, mounted under /v1 and /api/v1. */
export const cryptoResources: RouteModule[] = [cryptoAddressRoutes, cryptoTransactionRoutes, paymentClaimLinkRoutes, paymentClaimRoutes];
/** Unauthenticated routers under /v1: the customer's side of payment claim links and of invoices. */
export const cryptoPublicResources: RouteModule[] = [publicClaimRoutes, publicInvoiceRoutes];
/** Routes outside /v1: the payment page at /pay/<secret>, an invoice's hosted page and PDF at /invoice/<secret>. */
export const cryptoPages: RouteModule[] = [payPageRoutes, invoicePageRoutes];
