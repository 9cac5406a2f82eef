import type { ActivityDeps } from './deps';
import type { ChargeInput } from '../billing/schedule';
import { generateSubscriptionInvoice } from '../services/billing/invoices';
import { markInvoiceOverdue } from '../services/billing/invoiceChanges';
import { loadSubscriptionForBilling, syncSubscriptionState } from '../services/billing/subscriptions';
import { wakeUpSubscription } from '../services/billing/subscriptionWakeUps';
import { createWorkerMetrics } from '../metrics/worker';
import { rebuildRollup, RebuildOutcome } from '../services/reports/reportRollups';
import type { RollupKind } from '../models/reportRollup';

/** Activities of the billing domain. Each is idempotent: a retry never bills or records twice. */
export function createBillingActivities(deps: ActivityDeps) {
  const metrics = deps.metrics ?? createWorkerMetrics();
  async function invoiceOf(subscriptionId: string, charge: ChargeInput): Promise<string | null> {
    const result = await generateSubscriptionInvoice(deps, subscriptionId, charge, deps.config.invoiceDueDays);
    if (result?.created) metrics.invoicesGenerated.inc({ kind: charge.kind });
    return result?.invoiceId ?? null;
  }
  return {
    /** pending -> overdue when still due on that date; true when the invoice is overdue. */
    markInvoiceOverdue: async (invoiceId: string, dueDate: string): Promise<boolean | { dueDateMoved: string }> => {
      const outcome = await markInvoiceOverdue(deps, invoiceId, dueDate);
      if (outcome === 'marked') metrics.invoicesOverdue.inc();
      if (typeof outcome === 'object') return { dueDateMoved: outcome.due_date_moved };
      return outcome !== 'not_pending';
    },
    /** The stored subscription as plain data for the plan, or null once deleted. */
    loadSubscription: (subscriptionId: string) => loadSubscriptionForBilling(subscriptionId),
    /** The invoice of one charge, keyed by (subscription, charge): its id, or null (subscription gone or canceled). */
    generateSubscriptionInvoice: (subscriptionId: string, charge: ChargeInput): Promise<string | null> => invoiceOf(subscriptionId, charge),
    /** Status and active phase as of `now`, with their events. */
    syncSubscriptionState: (subscriptionId: string, nowIso: string) => syncSubscriptionState(subscriptionId, nowIso),
    /** One wake-up of a subscription in one call (services/billing/subscriptionWakeUps.ts): its status after. */
    renewSubscription: async (subscriptionId: string, charges: ChargeInput[], nowIso: string): Promise<string> => {
      const outcome = await wakeUpSubscription(deps, subscriptionId, charges, nowIso);
      for (const kind of outcome.created) metrics.invoicesGenerated.inc({ kind });
      return outcome.status;
    },
    /** Rebuilds one report rollup of an account and scope from its source (idempotent: never an increment). */
    rebuildReportRollup: (input: { accountId: string; sandbox: string | null; kind: RollupKind }): Promise<RebuildOutcome> =>
      rebuildRollup({ accountId: input.accountId, sandbox: input.sandbox }, input.kind),
  };
}
