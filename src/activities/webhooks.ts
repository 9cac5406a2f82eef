import type { ActivityDeps } from './deps';

/** Activities of the webhooks domain. */
export function createWebhooksActivities(_deps: ActivityDeps) {
  return {};
}
