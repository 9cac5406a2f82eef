import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

const priceSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    product_id: { type: String, required: true },
    /** Integer cents. */
    amount: { type: Number, required: true },
    active: { type: Boolean, default: true },
    recurring: {
      type: new Schema({ interval: { type: String, required: true }, interval_count: { type: Number, required: true } }, { _id: false }),
      default: null,
    },
    /** Quick-start aliases, stored as given (docs/adr/0107-request-bodies.md: unknown fields ignored, aliases accepted). */
    currency: { type: String, default: null },
  },
  { timestamps, versionKey: false },
);
priceSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(priceSchema);
priceSchema.index({ product_id: 1 });

export type PriceDoc = InferSchemaType<typeof priceSchema> & { _id: string; created_at: Date; updated_at: Date };
export const Price = model('Price', priceSchema, 'prices');
