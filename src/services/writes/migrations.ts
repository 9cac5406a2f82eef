/**
 * Data migrations run from a process's start, each until one run finishes it: its `migrations`
 * document then makes later starts cost one read by `_id`. Several processes (workers) may run
 * one at the same time, so a migration's writes must be safe to repeat and to race.
 */
import { Migration } from '../../models/migration';
import { isDuplicateKey } from '../../models/errors';

export interface MigrationRun {
  /** Documents changed by this run. */
  changed: number;
  /** False when something is left for a later start (the run was stopped, or other writers kept a document busy). */
  finished: boolean;
}

/** Runs `migrate` unless `name` is done; records it done when the run finished. Returns what this run changed. */
export async function runMigration(name: string, migrate: () => Promise<MigrationRun>): Promise<number> {
  if (await Migration.exists({ _id: name })) return 0;
  const run = await migrate();
  if (run.finished) {
    await Migration.collection.insertOne({ _id: name, done_at: new Date(), changed: run.changed } as never).catch((err) => {
      if (!isDuplicateKey(err)) throw err;
    });
  }
  return run.changed;
}
