import { Schema, model, InferSchemaType } from 'mongoose';
import { timestamps } from './scope';

const accountSchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    owner_user_id: { type: Number, required: true },
    /** Named sandboxes of this account; each is a separate data scope. */
    sandboxes: { type: [String], default: [] },
    /** Stepped by each change (a rename through the API, a new sandbox from the CLI), one writer at a time (services/writes/heldWrites.ts). */
    write_version: { type: Number, default: 0 },
  },
  { timestamps, versionKey: false },
);

export type AccountDoc = InferSchemaType<typeof accountSchema> & { _id: string; created_at: Date; updated_at: Date };
export const Account = model('Account', accountSchema, 'accounts');
