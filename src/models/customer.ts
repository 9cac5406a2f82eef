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
    /** What the console's search finds it by (src/lib/searchTerms.ts); never presented. */
    search_terms: { type: [String], default: undefined },
  },
  { timestamps, versionKey: false },
);
// Email is unique per account and scope (each sandbox separately).
customerSchema.index({ account_id: 1, sandbox: 1, email: 1 }, { unique: true });
customerSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(customerSchema);
// The console's search: `{ list_scope, search_terms }`, both equalities (GIN companions).
customerSchema.index({ search_terms: 1 });

export type CustomerDoc = InferSchemaType<typeof customerSchema> & { _id: string; created_at: Date; updated_at: Date };
export const Customer = model('Customer', customerSchema, 'customers');
