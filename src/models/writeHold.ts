import { Schema, model, InferSchemaType } from 'mongoose';

/**
 * A writer's hold on one version of a document (`_id` = `<collection>:<document id>#<version>`),
 * for documents written by more than one actor (services/writes/heldWrites.ts). FerretDB v1 writes an
 * update back as the whole document it read, with nothing held in between, so two writers of
 * different fields at once can lose one write; an insert on `_id` is atomic, so whoever inserts
 * the hold is the only writer of that version.
 */
const writeHoldSchema = new Schema(
  {
    _id: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export type WriteHoldDoc = InferSchemaType<typeof writeHoldSchema> & { _id: string };
export const WriteHold = model('WriteHold', writeHoldSchema, 'write_holds');
