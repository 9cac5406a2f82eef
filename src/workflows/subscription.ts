/**
 * One workflow per subscription, the single owner of its billing: it wakes at billing dates
 * and phase boundaries (durable timers), generates every charge due up to now (so billing
 * dates missed while workers were down are caught up, each exactly once: invoices are keyed
 * by subscription and period), keeps phase/status state in step, and answers a query with
 * its view of the schedule. Signals: cancel, changed (anchor or proration behaviour).
 */
import { condition, continueAsNew, patched, proxyActivities, proxyLocalActivities, setHandler, upsertSearchAttributes, workflowInfo, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ACTIVITY_HEARTBEAT_TIMEOUT } from '../temporal/activityOptions';
import { BillingPlan, chargeInputOf, invoicedCharges, nextBillingAfter, nextWakeAfter, statusAt, activePhaseIndex, upcomingCharges } from '../billing/schedule';
import { toBillingPlan } from '../billing/subscriptionPlan';
import {
  cancelSubscriptionSignal,
  scheduleQuery,
  searchAttributes,
  subscriptionChangedSignal,
  SubscriptionWorkflowInput,
} from '../temporal/subscriptionDefinitions';

const RETRY: RetryPolicy = { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' };
const asActivities = proxyActivities<Activities>({ heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT, startToCloseTimeout: '1 minute', retry: RETRY });
const asLocalActivities = proxyLocalActivities<Activities>({ startToCloseTimeout: '1 minute', retry: RETRY });
/**
 * Recorded in the history of runs whose activities are local: a renewal (invoice, state) is one
 * workflow task instead of three plus two activity tasks, which is what bounded how many
 * subscriptions renewing at one instant the dev server could invoice per second. Runs started
 * before keep regular activities, so their histories still replay.
 */
const LOCAL_ACTIVITIES_PATCH = 'subscription-local-activities';
/**
 * Recorded in runs whose wake-ups are one local activity (invoices, then state: `renewSubscription`)
 * instead of one per charge plus one for the state: an activation and a local activity fewer per
 * renewal on the worker's busiest thread. Runs with local activities started before keep two.
 */
const ONE_ACTIVITY_PATCH = 'subscription-renew-in-one-activity';

// Keeps history bounded: a monthly subscription reaches this after years, a daily one after months.
const ITERATIONS_BEFORE_CONTINUE_AS_NEW = 200;


export async function subscriptionWorkflow(input: SubscriptionWorkflowInput): Promise<'ended' | 'canceled' | 'deleted'> {
  const local = patched(LOCAL_ACTIVITIES_PATCH);
  const acts = local ? asLocalActivities : asActivities;
  const renewInOne = local && patched(ONE_ACTIVITY_PATCH);
  const stored = await acts.loadSubscription(input.subscriptionId);
  if (!stored) return 'deleted';
  let plan: BillingPlan = toBillingPlan(stored);
  let processedUntil: Date | null = input.processedUntil ? new Date(input.processedUntil) : null;
  let canceled = false;
  let changed = false;
  let nextWake: Date | null = null;

  setHandler(cancelSubscriptionSignal, () => {
    canceled = true;
  });
  setHandler(subscriptionChangedSignal, () => {
    changed = true;
  });
  setHandler(scheduleQuery, () => {
    const now = new Date(Date.now());
    return {
      status: canceled ? 'canceled' : statusAt(plan, now),
      activePhaseIndex: activePhaseIndex(plan, now),
      processedUntil: processedUntil?.toISOString() ?? null,
      nextWakeAt: nextWake?.toISOString() ?? null,
      upcoming: upcomingCharges(plan, now, 5)
        .map((c) => ({ at: c.at.toISOString(), kind: c.kind, total: c.total })),
    };
  });

  for (let i = 0; ; i++) {
    const now = new Date(Date.now());
    const charges = invoicedCharges(plan, now, processedUntil).map(chargeInputOf);
    let status: string;
    if (renewInOne) {
      status = await acts.renewSubscription(input.subscriptionId, charges, now.toISOString());
      processedUntil = now;
    } else {
      for (const charge of charges) await acts.generateSubscriptionInvoice(input.subscriptionId, charge);
      processedUntil = now;
      status = await acts.syncSubscriptionState(input.subscriptionId, now.toISOString());
    }
    if (status === 'deleted') return 'deleted';
    nextWake = nextWakeAfter(plan, now);
    if (input.indexed) {
      const nextBilling = nextBillingAfter(plan, now);
      upsertSearchAttributes([
        { key: searchAttributes.accountId, value: input.accountId },
        { key: searchAttributes.customerId, value: input.customerId },
        { key: searchAttributes.status, value: status },
        ...(nextBilling ? [{ key: searchAttributes.nextBillingDate, value: nextBilling }] : []),
      ]);
    }
    if (status === 'ended' || status === 'canceled' || nextWake === null) return status === 'canceled' ? 'canceled' : 'ended';

    await condition(() => canceled || changed, nextWake.getTime() - now.getTime());
    if (canceled) return 'canceled';
    if (changed) {
      changed = false;
      const reloaded = await acts.loadSubscription(input.subscriptionId);
      if (!reloaded) return 'deleted';
      plan = toBillingPlan(reloaded);
    }
    if (i >= ITERATIONS_BEFORE_CONTINUE_AS_NEW || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof subscriptionWorkflow>({ ...input, processedUntil: processedUntil.toISOString() });
    }
  }
}
