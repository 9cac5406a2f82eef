/**
 * All activities, built from their dependencies (`createActivities(deps)`), so tests can
 * inject fakes for outside services (price oracle, HTTP) while the database stays real.
 */
import type { ActivityDeps } from './deps';
import { createBillingActivities } from './billing';
import { createCryptoActivities } from './crypto';
import { createWebhooksActivities } from './webhooks';
import { createChainActivities } from './chains';

export type { ActivityDeps } from './deps';

export function createActivities(deps: ActivityDeps) {
  return { ...createBillingActivities(deps), ...createCryptoActivities(deps), ...createWebhooksActivities(deps), ...createChainActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
