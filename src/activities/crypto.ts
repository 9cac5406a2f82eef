import type { ActivityDeps } from './deps';
import { allocateTransaction, AllocationConflictError, AllocationOutcome } from '../services/crypto/allocation';
import { expirePaymentClaimLink } from '../services/crypto/paymentClaimLinks';
import { PriceUnavailableError } from '../services/crypto/priceOracle';
import { AllocationOutcomeLabel, createWorkerMetrics } from '../metrics/worker';

/** Activities of the crypto domain. Each is idempotent: a retry never applies or records twice. */
export function createCryptoActivities(deps: ActivityDeps) {
  const metrics = deps.metrics ?? createWorkerMetrics();
  /** One allocation, counted by its outcome; a failure is counted, then rethrown for Temporal to retry. */
  async function allocate(txId: string): Promise<AllocationOutcome> {
    let outcome: AllocationOutcomeLabel = 'error';
    try {
      const result = await allocateTransaction(deps, txId);
      outcome = result.status;
      return result;
    } catch (err) {
      if (err instanceof AllocationConflictError) outcome = 'conflict';
      else if (err instanceof PriceUnavailableError) outcome = 'price_unavailable';
      throw err;
    } finally {
      metrics.allocations.inc({ outcome });
    }
  }
  return {
    /** Prices and allocates several transactions of one customer, in order; throws (and is retried)
     *  while the oracle is down, and a retry redoes only what is not done. */
    allocateCryptoTransactions: async (txIds: string[]) => {
      const out = [];
      for (const id of txIds) out.push(await allocate(id));
      return out;
    },
    /** active -> expired once past expires_at; true when the link is expired. */
    expirePaymentClaimLink: (linkId: string) => expirePaymentClaimLink(linkId),
  };
}
