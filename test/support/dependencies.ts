/**
 * Dependencies of a test's services, activities and app: the same real database, and the
 * test's own settings, price oracle and workflow clients. Without a Temporal client the
 * workflow clients start nothing and allocation runs inline (plain API tests).
 */
import { Coalescer } from '../../src/lib/coalesce';
import pino from 'pino';
import type { Dependencies } from '../../src/dependencies';
import { loadConfig } from '../../src/config';
import { temporalWorkflows, Workflows } from '../../src/temporal/clients';
import type { TemporalContext } from '../../src/temporal/context';
import { CachedOracle, FixedRateOracle, PriceOracle, priceOracleFromConfig, PriceUnavailableError } from '../../src/services/crypto/priceOracle';
import type { CryptoCurrency } from '../../src/cryptocurrency/addresses';
import { SpotPrices } from '../../src/services/crypto/spotPrices';
import { allocateTransaction, AllocationConflictError } from '../../src/services/crypto/allocation';
import { NO_START } from '../../src/services/writes/workflowStarts';
import { StoredKeys } from '../../src/services/writes/storedKeys';
import { ApiError } from '../../src/lib/errors';

export interface TestDependencyOptions extends Partial<Dependencies> {
  /** Environment on top of process.env for the config (LOG_LEVEL silent by default). */
  env?: Record<string, string>;
  /** Replaces single workflow clients (a recording one, say). */
  workflowOverrides?: Partial<Workflows>;
}

export function testDependencies(opts: TestDependencyOptions = {}): Dependencies {
  const config = opts.config ?? loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent', ...opts.env });
  const logger = opts.logger ?? pino({ level: 'silent' });
  const temporal = opts.temporal ?? null;
  const priceOracle = opts.priceOracle ?? new CachedOracle(priceOracleFromConfig(config.priceOracle));
  const deps: Dependencies = {
    config,
    logger,
    temporal,
    priceOracle,
    spotPrices: opts.spotPrices ?? new SpotPrices(priceOracle),
    workflows: opts.workflows ?? (temporal ? temporalWorkflows(temporal, logger) : inlineWorkflows(() => deps)),
    inFlight: new Coalescer(),
    keys: opts.keys ?? new StoredKeys(),
  };
  if (opts.workflowOverrides) deps.workflows = { ...deps.workflows, ...opts.workflowOverrides };
  return deps;
}

const nothing = async () => undefined;
const noTemporal = async (): Promise<never> => {
  throw new Error('Temporal client is not configured');
};

/** Workflow clients of a process without Temporal: nothing is recorded or started; allocation runs inline; report rollups stay stale (reports compute live). */
export function inlineWorkflows(deps: () => Dependencies): Workflows {
  return {
    outbox: null,
    allocation: {
      // An oracle failure (or invoices that kept changing) leaves the transaction unallocated.
      request: async (tx) => {
        try {
          await allocateTransaction(deps(), tx._id);
        } catch (err) {
          if (!(err instanceof PriceUnavailableError) && !(err instanceof AllocationConflictError)) throw err;
        }
      },
      sweep: async () => 0,
      allocateFirst: async (txId) => {
        try {
          await allocateTransaction(deps(), txId);
        } catch (err) {
          if (err instanceof PriceUnavailableError) throw ApiError.external('The price oracle is unavailable; retry later');
          throw err;
        }
      },
    },
    chainWatcher: { ensure: noTemporal },
    claimLink: { plan: async () => NO_START, close: nothing },
    invoiceDue: { watch: nothing, plan: async () => NO_START, close: nothing },
    // Nothing rebuilds a rollup marked stale: the reports compute live (as without a worker).
    reportRollup: { stale: nothing },
    subscription: { plan: async () => NO_START, changed: nothing, cancel: nothing },
    webhookDelivery: { start: noTemporal, stopDeliveriesOf: nothing },
  };
}

/** A price oracle a test points elsewhere between requests (the test's own; the fixed table by default). */
export class SwitchableOracle implements PriceOracle {
  current: PriceOracle = new FixedRateOracle();
  usdPrice(currency: CryptoCurrency, at: Date): Promise<string> {
    return this.current.usdPrice(currency, at);
  }
  knownPrice(currency: CryptoCurrency, at: Date): string | null {
    return this.current.knownPrice?.(currency, at) ?? null;
  }
}
