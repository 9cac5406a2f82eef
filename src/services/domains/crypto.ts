import type { DomainRuntime } from '../runtime';
import { setSlippageTolerance } from '../allocation';
import { configurePaymentClaims } from '../paymentClaimLinks';

/**
 * Start-up of the crypto domain in a process that serves the API (slippage and claim settings
 * from config). Returns a stop function.
 */
export async function startCryptoDomain(rt: DomainRuntime): Promise<() => Promise<void>> {
  setSlippageTolerance(rt.config.slippageTolerance);
  configurePaymentClaims({ publicUrl: rt.config.publicUrl, verification: rt.config.claimVerification });
  return async () => undefined;
}
