/**
 * The allocation workflow (`allocationWorkflow`), one per paying customer (or per account and
 * scope for account-wallet payments), which allocates its transactions one after another; each
 * transaction is a signal-with-start.
 *
 * The transaction is its own start intent: it is written `allocation_due: true` (the allocation's
 * finish writes false), the signal goes at once, and a sweeper in every process that starts the
 * domains signals the transactions still due a while after they were written (Temporal was down,
 * or the process died between the write and the signal). An intent document per transaction
 * (the workflow-start outbox) cost four statements per payment: its write, and its marking.
 */
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { ApiError } from '../../lib/errors';
import { workflowIds } from '../workflowIds';
import { allocateSignal, AllocationWorkflowInput } from '../cryptoDefinitions';
import { startWithoutIntent, WorkflowStartRequest, WorkflowStarts } from '../../services/writes/workflowStarts';

export type Allocatable = Pick<CryptoTransactionDoc, '_id' | 'customer_id' | 'account_id' | 'sandbox'>;

export interface AllocationSweepOptions {
  /** Transactions written this recently are left to the request that wrote them. */
  minAgeMs: number;
  batch: number;
}

export interface AllocationWorkflows {
  /**
   * After the transaction was written (`allocation_due: true`): signals its allocation. Throws
   * only in a process whose starts must not fail quietly (the worker: its activity is retried);
   * otherwise a failed signal is left to `sweep`.
   */
  request(tx: Allocatable): Promise<void>;
  /** Signals the allocation of transactions still due (see the module comment); the number signalled. */
  sweep(opts: AllocationSweepOptions): Promise<number>;
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

function allocationStart(tx: Allocatable): WorkflowStartRequest<[AllocationWorkflowInput]> {
  const key = allocationKey(tx);
  // A repeated signal is harmless: allocation of a transaction is idempotent.
  return { workflowId: workflowIds.allocation(key), workflowType: 'allocationWorkflow', args: [{ key, pending: [] }], signal: { name: allocateSignal.name, args: [tx._id] } };
}

/** A transaction the sweeper signalled is not signalled again by the same process for this long (one stuck while the oracle is down). */
const RESEND_AFTER_MS = 5 * 60_000;

export function allocationWorkflows(outbox: WorkflowStarts): AllocationWorkflows {
  const sent = new Map<string, number>();
  return {
    request: async (tx) => {
      await startWithoutIntent(outbox, allocationStart(tx));
    },
    sweep: async ({ minAgeMs, batch }) => {
      const now = Date.now();
      for (const [id, at] of sent) if (now - at > RESEND_AFTER_MS) sent.delete(id);
      // `allocation_due: true`: an equality FerretDB pushes down (to its index); the age is compared after.
      const due = await CryptoTransaction.collection
        .find({ allocation_due: true } as never, { projection: { _id: 1, customer_id: 1, account_id: 1, sandbox: 1, created_at: 1 } })
        .limit(batch * 4)
        .toArray();
      let signalled = 0;
      for (const tx of due as unknown as (Allocatable & { created_at: Date })[]) {
        if (signalled >= batch) break;
        if (now - new Date(tx.created_at).getTime() < minAgeMs || sent.has(tx._id)) continue;
        // Throws at an outage: the rest would wait out the same deadline (the caller logs it).
        await startWithoutIntent(outbox, allocationStart(tx), { throwOnFailure: true });
        sent.set(tx._id, Date.now());
        signalled += 1;
      }
      return signalled;
    },
    // The customer's workflow allocates it; a manual allocation waits until it has.
    allocateFirst: async () => {
      throw ApiError.conflict('allocation_in_progress', 'The transaction is still being allocated; retry shortly', 'id');
    },
  };
}
