import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

const productSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    name: { type: String, required: true },
  },
  { timestamps, versionKey: false },
);
productSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(productSchema);

export type ProductDoc = InferSchemaType<typeof productSchema> & { _id: string; created_at: Date; updated_at: Date };
export const Product = model('Product', productSchema, 'products');
