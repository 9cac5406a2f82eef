import { Schema, model } from 'mongoose';

/**
 * One document per start-up data migration that is done (`_id` its name), so that later starts
 * cost one read by `_id` instead of the migration's search (services/writes/migrations.ts).
 */
const migrationSchema = new Schema(
  {
    _id: { type: String, required: true },
    done_at: { type: Date, required: true },
    /** Documents the run that finished it changed. */
    changed: { type: Number, required: true },
  },
  { versionKey: false },
);

export interface MigrationDoc {
  _id: string;
  done_at: Date;
  changed: number;
}
export const Migration = model('Migration', migrationSchema, 'migrations');
