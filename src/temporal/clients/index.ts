/**
 * One typed client per workflow (start, signal, close, by workflow type name), so services and
 * API never import workflow code. Built once per process from its Temporal client and its
 * workflow-start outbox (after temporalio/samples-typescript's saga `clients/index.ts`).
 */
import type { Logger } from 'pino';
import type { TemporalContext } from '../context';
import { createWorkflowStarts, WorkflowStartMode, WorkflowStarts } from '../../services/writes/workflowStarts';
import { AllocationWorkflows, allocationWorkflows } from './allocation';
import { ChainWatcherWorkflows, chainWatcherWorkflows } from './chainWatcher';
import { ClaimLinkWorkflows, claimLinkWorkflows } from './claimLink';
import { InvoiceDueWorkflows, invoiceDueWorkflows } from './invoiceDue';
import { ReportRollupWorkflows, reportRollupWorkflows } from './reportRollup';
import { SubscriptionWorkflows, subscriptionWorkflows } from './subscription';
import { WebhookDeliveryWorkflows, webhookDeliveryWorkflows } from './webhookDelivery';

export interface Workflows {
  /** The workflow-start outbox of the process; null without Temporal (nothing to sweep). */
  outbox: WorkflowStarts | null;
  allocation: AllocationWorkflows;
  chainWatcher: ChainWatcherWorkflows;
  claimLink: ClaimLinkWorkflows;
  invoiceDue: InvoiceDueWorkflows;
  reportRollup: ReportRollupWorkflows;
  subscription: SubscriptionWorkflows;
  webhookDelivery: WebhookDeliveryWorkflows;
}

export function temporalWorkflows(temporal: TemporalContext, logger: Logger, startMode: WorkflowStartMode = 'outbox'): Workflows {
  const outbox = createWorkflowStarts(temporal, logger, startMode);
  return {
    outbox,
    allocation: allocationWorkflows(outbox),
    chainWatcher: chainWatcherWorkflows(temporal),
    claimLink: claimLinkWorkflows(temporal, outbox),
    invoiceDue: invoiceDueWorkflows(temporal, outbox),
    reportRollup: reportRollupWorkflows(outbox),
    subscription: subscriptionWorkflows(temporal, outbox),
    webhookDelivery: webhookDeliveryWorkflows(temporal),
  };
}
