import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

const customerSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    email: { type: String, required: true },
    first_name: { type: String, default: null },
    last_name: { type: String, default: null },
  },
  { timestamps, versionKey: false },
);
// Email is unique per account and scope (each sandbox separately).
customerSchema.index({ account_id: 1, sandbox: 1, email: 1 }, { unique: true });
customerSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/listing.ts).
indexListSlots(customerSchema);

export type CustomerDoc = InferSchemaType<typeof customerSchema> & { _id: string; created_at: Date; updated_at: Date };
export const Customer = model('Customer', customerSchema, 'customers');
