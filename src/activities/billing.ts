import type { ActivityDeps } from './deps';
import { markInvoiceOverdue } from '../services/invoices';
import { ChargeInput, generateSubscriptionInvoice, loadSubscriptionForBilling, syncSubscriptionState } from '../services/subscriptions';

/** Activities of the billing domain. Each is idempotent: a retry never bills or records twice. */
export function createBillingActivities(deps: ActivityDeps) {
  return {
    /** pending -> overdue when still due on that date; true when the invoice is overdue. */
    markInvoiceOverdue: (invoiceId: string, dueDate: string) => markInvoiceOverdue(invoiceId, dueDate),
    /** The stored subscription as plain data for the plan, or null once deleted. */
    loadSubscription: (subscriptionId: string) => loadSubscriptionForBilling(subscriptionId),
    /** The invoice of one charge, keyed by (subscription, charge). */
    generateSubscriptionInvoice: (subscriptionId: string, charge: ChargeInput) =>
      generateSubscriptionInvoice(subscriptionId, charge, deps.config.invoiceDueDays),
    /** Status and active phase as of `now`, with their events. */
    syncSubscriptionState: (subscriptionId: string, nowIso: string) => syncSubscriptionState(subscriptionId, nowIso),
  };
}
