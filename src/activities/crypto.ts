import type { ActivityDeps } from './deps';

/** Activities of the crypto domain. */
export function createCryptoActivities(_deps: ActivityDeps) {
  return {};
}
