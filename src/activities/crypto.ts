import type { ActivityDeps } from './deps';
import { allocateTransaction, setSlippageTolerance } from '../services/allocation';
import { expirePaymentClaimLink } from '../services/paymentClaimLinks';
import { isDefaultPriceOracle, priceOracleFromConfig, setPriceOracle } from '../services/priceOracle';

/** Activities of the crypto domain. Each is idempotent: a retry never applies or records twice. */
export function createCryptoActivities(deps: ActivityDeps) {
  setSlippageTolerance(deps.config.slippageTolerance);
  // The worker prices transactions here. `fixed` (the default) is what the process starts with,
  // so it is left alone: a fake oracle a test plugged in before building the worker stays.
  if (!isDefaultPriceOracle(deps.config.priceOracle)) setPriceOracle(priceOracleFromConfig(deps.config.priceOracle));
  return {
    /** Prices and allocates one transaction; throws (and is retried) while the oracle is down. */
    allocateCryptoTransaction: async (txId: string) => allocateTransaction(txId),
    /** The same for several transactions of one customer, in order; a retry redoes only what is not done. */
    allocateCryptoTransactions: async (txIds: string[]) => {
      const out = [];
      for (const id of txIds) out.push(await allocateTransaction(id));
      return out;
    },
    /** active -> expired once past expires_at; true when the link is expired. */
    expirePaymentClaimLink: (linkId: string) => expirePaymentClaimLink(linkId),
  };
}
