/** Signals, query and search attributes of the subscription workflow. Pure: shared by services and workflows. */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export interface SubscriptionWorkflowInput {
  subscriptionId: string;
  accountId: string;
  customerId: string;
  /** Charges at or before this instant were already generated (carried over continue-as-new). */
  processedUntil?: string | null;
  /** Upsert search attributes (they must be registered on the server, as `npm start` does). */
  indexed?: boolean;
}

/** Cancel: bill nothing more and end. */
export const cancelSubscriptionSignal = defineSignal('cancelSubscription');
/** The anchor or proration behaviour changed: reload the plan. */
export const subscriptionChangedSignal = defineSignal('subscriptionChanged');

export interface ScheduleView {
  status: string;
  activePhaseIndex: number | null;
  processedUntil: string | null;
  nextWakeAt: string | null;
  upcoming: { at: string; kind: string; total: string }[];
}
/** The workflow's view of the schedule (what it has billed, when it wakes next, what comes). */
export const scheduleQuery = defineQuery<ScheduleView>('schedule');

export const searchAttributes = {
  accountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
  customerId: defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('SubscriptionStatus', SearchAttributeType.KEYWORD),
  nextBillingDate: defineSearchAttributeKey('NextBillingDate', SearchAttributeType.DATETIME),
};
