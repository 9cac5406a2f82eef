/**
 * The payment claim link workflow (`claimLinkWorkflow`), one per link, which marks it expired at
 * `expires_at`; started by type name through the workflow-start outbox, closed when the link is
 * used up or deleted.
 */
import { PaymentClaimLink, PaymentClaimLinkDoc } from '../../models/paymentClaimLink';
import type { TemporalContext } from '../context';
import { workflowIds } from '../workflowIds';
import { claimLinkClosedSignal, ClaimLinkInput } from '../cryptoDefinitions';
import { PendingStart, recordWorkflowStart, WorkflowStarts } from '../../services/writes/workflowStarts';
import { signalIfRunning } from './signal';

export interface ClaimLinkWorkflows {
  /** The link's expiry workflow start, recorded before the link is written (see workflowStarts). */
  plan(link: Pick<PaymentClaimLinkDoc, '_id' | 'expires_at'>): Promise<PendingStart>;
  /** Used up or deleted: nothing left to expire. */
  close(linkId: string): Promise<void>;
}

export function claimLinkWorkflows(temporal: TemporalContext, outbox: WorkflowStarts): ClaimLinkWorkflows {
  return {
    plan: (link) => {
      const args: [ClaimLinkInput] = [{ linkId: link._id, expiresAt: new Date(link.expires_at).toISOString() }];
      return recordWorkflowStart(outbox, {
        workflowId: workflowIds.claimLink(link._id),
        workflowType: 'claimLinkWorkflow',
        args,
        resource: { collection: PaymentClaimLink.collection.collectionName, id: link._id },
      });
    },
    close: (linkId) => signalIfRunning(temporal, workflowIds.claimLink(linkId), claimLinkClosedSignal),
  };
}
