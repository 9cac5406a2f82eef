import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields } from './scope';

/**
 * Every change writes one event here. Webhook delivery reads from this collection:
 * `dispatched` false means delivery workflows have not been started for it yet. The sweeper
 * filters on that boolean, not on `dispatched_at: null`: FerretDB pushes an equality on a
 * boolean down to the database (and its index), never a null.
 */
const eventSchema = new Schema(
  {
    ...scopedFields,
    event: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, required: true },
    timestamp: { type: Date, required: true },
    dispatched: { type: Boolean, default: false },
    dispatched_at: { type: Date, default: null },
  },
  { versionKey: false, minimize: false },
);
eventSchema.index({ account_id: 1, sandbox: 1, timestamp: 1 });
eventSchema.index({ dispatched: 1, timestamp: 1 });
eventSchema.index({ 'payload.id': 1, timestamp: 1 });

export type EventDoc = InferSchemaType<typeof eventSchema> & { _id: string };
export const Event = model('Event', eventSchema, 'events');
