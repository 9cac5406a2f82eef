/**
 * All activities, built from their dependencies (`createActivities(deps)`), so tests can
 * inject fakes for outside services (price oracle, HTTP) while the database stays real.
 */
import type { ActivityDeps } from './deps';
import { createBillingActivities } from './billing';
import { createCryptoActivities } from './crypto';
import { createWebhooksActivities } from './webhooks';
import { createChainActivities } from './chains';
import { createWorkerMetrics } from '../metrics/worker';
import { allHeartbeating } from './heartbeat';

export type { ActivityDeps } from './deps';

export function createActivities(deps: ActivityDeps) {
  // One metrics object for every domain, so a scrape sees all their counts.
  const all = { ...deps, metrics: deps.metrics ?? createWorkerMetrics() };
  return allHeartbeating({ ...createBillingActivities(all), ...createCryptoActivities(all), ...createWebhooksActivities(all), ...createChainActivities(all) });
}

export type Activities = ReturnType<typeof createActivities>;
