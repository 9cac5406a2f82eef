import type { ActivityDeps } from './deps';
import type { CryptoCurrency } from '../cryptocurrency/addresses';
import type { BlockRef, ChainClient } from '../chains/types';
import { chainClientFor } from '../chains';
import { chainSettings, ScanResult, scanChain } from '../services/crypto/chainWatcher';
import { createWatchedAddresses } from '../services/crypto/watchedAddresses';
import { createWorkerMetrics } from '../metrics/worker';

/** Activities of on-chain detection. A scan is idempotent: rescanning a block records nothing twice. */
export function createChainActivities(deps: ActivityDeps) {
  const metrics = deps.metrics ?? createWorkerMetrics();
  const clients = new Map<CryptoCurrency, ChainClient | null>();
  const clientFor = (currency: CryptoCurrency) => {
    if (!clients.has(currency)) clients.set(currency, chainClientFor(deps.config, currency));
    return clients.get(currency)!;
  };
  // One copy per worker process: re-read when an address is added or removed (services/crypto/watchedAddresses.ts).
  const watched = createWatchedAddresses();
  return {
    /** Scans `currency`'s chain after `cursor`; null when the currency is no longer configured (the watcher ends). */
    scanChain: async (currency: CryptoCurrency, cursor: BlockRef | null): Promise<ScanResult | null> => {
      const client = clientFor(currency);
      if (!client) return null;
      const result = await scanChain(deps, client, chainSettings(deps.config, currency), cursor, watched);
      // A failed scan leaves the last value (Temporal's activity failure metrics show the failures).
      metrics.chainScanLag.set({ currency }, Math.max(0, result.tipHeight - result.cursor.height));
      return result;
    },
  };
}
