/**
 * What the services, activities and routes are built from: built once at start-up
 * (`createDependencies`, in startup/process.ts) and passed down, never set in module state.
 * Tests build their own (test/support/dependencies.ts): the same real database, their own
 * price oracle, settings and workflow clients.
 */
import type { Logger } from 'pino';
import type { Config } from './config';
import type { TemporalContext } from './temporal/context';
import { temporalWorkflows, Workflows } from './temporal/clients';
import { Coalescer } from './lib/coalesce';
import type { WorkflowStartMode } from './services/writes/workflowStarts';
import { CachedOracle, PriceOracle, priceOracleFromConfig } from './services/crypto/priceOracle';
import { SpotPrices } from './services/crypto/spotPrices';
import { StoredKeys } from './services/writes/storedKeys';

export interface Dependencies {
  /** Settings: slippage tolerance, payment claims (PUBLIC_URL, CLAIM_*), webhook URL rules, ... */
  config: Config;
  logger: Logger;
  /** USD prices of crypto payments (the configured provider, cached per minute, lookups in flight shared, failures backed off). */
  priceOracle: PriceOracle;
  /** The pay page's spot prices: this process's one refresher over `priceOracle`, whatever the visitors. */
  spotPrices: SpotPrices;
  /** The process's Temporal client, for the sweepers and webhook dispatch; null where none runs. */
  temporal: TemporalContext | null;
  /** One client per workflow (src/temporal/clients). */
  workflows: Workflows;
  /** Same-key follow-up work of this process shared by concurrent callers (rollup marks). */
  inFlight: Coalescer;
  /** The deployment's stored keys (invoice links), each read once by this process. */
  keys: StoredKeys;
}

export function createDependencies(opts: { config: Config; logger: Logger; temporal: TemporalContext; workflowStarts?: WorkflowStartMode }): Dependencies {
  const { config, logger, temporal } = opts;
  const priceOracle = new CachedOracle(priceOracleFromConfig(config.priceOracle));
  return {
    config,
    logger,
    temporal,
    priceOracle,
    spotPrices: new SpotPrices(priceOracle),
    workflows: temporalWorkflows(temporal, logger, opts.workflowStarts),
    inFlight: new Coalescer(),
    keys: new StoredKeys(),
  };
}
