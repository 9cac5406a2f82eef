/**
 * The subscription workflow (`subscriptionWorkflow`), one per subscription, started by type
 * name through the workflow-start outbox; signalled when the subscription changes or is canceled.
 */
import { Subscription, SubscriptionDoc } from '../../models/subscription';
import type { TemporalContext } from '../context';
import { workflowIds } from '../workflowIds';
import { cancelSubscriptionSignal, subscriptionChangedSignal, SubscriptionWorkflowInput } from '../subscriptionDefinitions';
import { PendingStart, recordWorkflowStart, WorkflowStarts } from '../../services/writes/workflowStarts';
import { signalIfRunning } from './signal';

export interface SubscriptionWorkflows {
  /** The subscription's workflow start, recorded before the subscription is written (see workflowStarts). */
  plan(sub: Pick<SubscriptionDoc, '_id' | 'account_id' | 'customer_id'>): Promise<PendingStart>;
  /** The anchor or proration behaviour changed: the workflow reloads the plan. */
  changed(subId: string): Promise<void>;
  /** Bill nothing more and end. */
  cancel(subId: string): Promise<void>;
}

export function subscriptionWorkflows(temporal: TemporalContext, outbox: WorkflowStarts): SubscriptionWorkflows {
  return {
    plan: (sub) => {
      const args: [SubscriptionWorkflowInput] = [{ subscriptionId: sub._id, accountId: sub.account_id, customerId: sub.customer_id, indexed: !!temporal.searchAttributes }];
      return recordWorkflowStart(outbox, {
        workflowId: workflowIds.subscription(sub._id),
        workflowType: 'subscriptionWorkflow',
        args,
        resource: { collection: Subscription.collection.collectionName, id: sub._id },
      });
    },
    // The workflow already ended (ended or canceled subscription): nothing to tell it.
    changed: (subId) => signalIfRunning(temporal, workflowIds.subscription(subId), subscriptionChangedSignal),
    cancel: (subId) => signalIfRunning(temporal, workflowIds.subscription(subId), cancelSubscriptionSignal),
  };
}
