/**
 * The allocation workflow (`allocationWorkflow`), one per paying customer (or per account and
 * scope for account-wallet payments), which allocates its transactions one after another; each
 * transaction is a signal-with-start through the workflow-start outbox.
 */
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { ApiError } from '../../lib/errors';
import { workflowIds } from '../workflowIds';
import { allocateSignal, AllocationWorkflowInput } from '../cryptoDefinitions';
import { recordWorkflowStart, WorkflowStarts } from '../../services/workflowStarts';

export type Allocatable = Pick<CryptoTransactionDoc, '_id' | 'customer_id' | 'account_id' | 'sandbox'>;

export interface AllocationWorkflows {
  /**
   * The allocation of a transaction: call it before the transaction is written (with
   * `recorded: false`: nothing is sent until it exists) and run what it returns once it is.
   */
  plan(tx: Allocatable, opts: { recorded: boolean }): Promise<() => Promise<void>>;
  /**
   * A manual allocation comes after the automatic one (which may already pay the invoice). Called
   * while the transaction is not allocated yet: finishes it, or refuses while another does.
   */
  allocateFirst(txId: string): Promise<void>;
}

/** Workflow key: the paying customer, or the account and scope for account-wallet payments. */
export function allocationKey(tx: Pick<CryptoTransactionDoc, 'customer_id' | 'account_id' | 'sandbox'>): string {
  return tx.customer_id ?? `${tx.account_id}-${tx.sandbox ?? 'live'}`;
}

export function allocationWorkflows(outbox: WorkflowStarts): AllocationWorkflows {
  return {
    // A repeated signal is harmless: allocation of a transaction is idempotent.
    plan: async (tx, opts) => {
      const key = allocationKey(tx);
      const args: [AllocationWorkflowInput] = [{ key, pending: [] }];
      const pending = await recordWorkflowStart(outbox, {
        workflowId: workflowIds.allocation(key),
        workflowType: 'allocationWorkflow',
        args,
        signal: { name: allocateSignal.name, args: [tx._id] },
        ...(opts.recorded ? {} : { resource: { collection: CryptoTransaction.collection.collectionName, id: tx._id } }),
      });
      return () => pending.start();
    },
    // The customer's workflow allocates it; a manual allocation waits until it has.
    allocateFirst: async () => {
      throw ApiError.conflict('allocation_in_progress', 'The transaction is still being allocated; retry shortly', 'id');
    },
  };
}
