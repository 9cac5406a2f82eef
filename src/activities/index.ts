/**
 * All activities, built from their dependencies (`createActivities(deps)`), so tests can
 * inject fakes for outside services (price oracle, HTTP) while the database stays real.
 */
import type { Config } from '../config';
import type { Logger } from 'pino';

export interface ActivityDeps {
  config: Config;
  logger: Logger;
}

export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
