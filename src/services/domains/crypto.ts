import type { DomainRuntime } from '../runtime';
import { setSlippageTolerance } from '../allocation';
import { configurePaymentClaims } from '../paymentClaimLinks';
import { isDefaultPriceOracle, priceOracleFromConfig, setPriceOracle } from '../priceOracle';

/**
 * Start-up of the crypto domain in a process that serves the API (slippage, claim settings and
 * the price oracle from config). Returns a stop function that puts the previous oracle back.
 */
export async function startCryptoDomain(rt: DomainRuntime): Promise<() => Promise<void>> {
  setSlippageTolerance(rt.config.slippageTolerance);
  configurePaymentClaims({
    publicUrl: rt.config.publicUrl,
    verification: rt.config.claimVerification,
    hmacKey: rt.config.claimChallengeHmacKey,
    confirmations: { BTC: rt.config.chains.BTC.confirmations, ETH: rt.config.chains.ETH.confirmations },
  });
  // `fixed` is what the process starts with: left alone, so an oracle a test plugged in stays.
  if (isDefaultPriceOracle(rt.config.priceOracle)) return async () => undefined;
  // Not cached again on restore: the previous oracle is already wrapped as it was plugged in.
  const previous = setPriceOracle(priceOracleFromConfig(rt.config.priceOracle));
  return async () => {
    setPriceOracle(previous, false);
  };
}
