import type { Logger } from 'pino';
import type { Config } from '../config';

/** What activities are built from; tests pass their own (same real database, fake outside services). */
export interface ActivityDeps {
  config: Config;
  logger: Logger;
}
