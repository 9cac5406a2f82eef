import type { Dependencies } from '../../dependencies';
import { sweepCreditReleases } from '../../services/billing/invoiceChanges';
import { runPeriodically } from '../../lib/periodic';

export interface CreditReleasesDomainOptions {
  intervalMs: number;
  /** Invoices written this recently are left to the request that wrote them. */
  minAgeMs: number;
  batch: number;
}

const DEFAULTS: CreditReleasesDomainOptions = { intervalMs: 10_000, minAgeMs: 30_000, batch: 100 };

/**
 * The sweeper of credit an invoice released (line items removed below what crypto paid) that has
 * not reached its transactions yet: the request died between the two writes, or a transaction was
 * still being allocated (services/billing/invoiceChanges.ts releaseInvoiceCredit). Every API and worker
 * process runs it; a release is idempotent. Returns a stop function.
 */
export async function startCreditReleasesDomain(deps: Dependencies, opts: Partial<CreditReleasesDomainOptions> = {}): Promise<() => Promise<void>> {
  const settings = { ...DEFAULTS, ...opts };
  return runPeriodically(async () => {
    try {
      await sweepCreditReleases(deps, settings);
    } catch (err) {
      deps.logger.warn({ err }, 'credit release sweeper pass failed; will retry');
    }
  }, settings.intervalMs);
}
