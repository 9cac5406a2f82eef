import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

const walletSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    owner_type: { type: String, enum: ['account', 'customer'], required: true },
    owner_id: { type: String, required: true },
  },
  { timestamps, versionKey: false },
);
// One wallet per owner and scope.
walletSchema.index({ owner_type: 1, owner_id: 1, sandbox: 1 }, { unique: true });
walletSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(walletSchema);
// The wallets of an owner (customer delete, pay page): the unique index above leads with owner_type.
walletSchema.index({ owner_id: 1 });

export type WalletDoc = InferSchemaType<typeof walletSchema> & { _id: string; created_at: Date; updated_at: Date };
export const Wallet = model('Wallet', walletSchema, 'wallets');
