import { Schema, model, InferSchemaType } from 'mongoose';

/** First response to an Idempotency-Key, kept 24 hours per account and scope. */
const idempotencyKeySchema = new Schema(
  {
    /** SHA-256 of account, scope and key. */
    _id: { type: String, required: true },
    request_hash: { type: String, required: true },
    state: { type: String, enum: ['processing', 'done'], required: true },
    status: { type: Number, default: null },
    body: { type: Schema.Types.Mixed, default: null },
    created_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// No TTL index: FerretDB v1 has none. Expired keys are ignored on read and purged by the retention schedule.
idempotencyKeySchema.index({ created_at: 1 });

export type IdempotencyKeyDoc = InferSchemaType<typeof idempotencyKeySchema> & { _id: string };
export const IdempotencyKey = model('IdempotencyKey', idempotencyKeySchema, 'idempotency_keys');
