import type { ActivityDeps } from './deps';

/** Activities of the billing domain. */
export function createBillingActivities(_deps: ActivityDeps) {
  return {};
}
