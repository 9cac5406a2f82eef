import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

const cryptoAddressSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    wallet_id: { type: String, required: true },
    /**
     * The wallet's customer (null for an account wallet): a wallet never changes owner, so a
     * payment to the address knows whose it is without reading the wallet. Absent on addresses
     * from earlier versions (read from the wallet then).
     */
    customer_id: { type: String, default: undefined },
    currency: { type: String, enum: ['BTC', 'ETH'], required: true },
    address: { type: String, required: true },
    /** Canonical form for uniqueness (ETH lowercased; bech32 lowercased). */
    address_key: { type: String, required: true },
  },
  { timestamps, versionKey: false },
);
cryptoAddressSchema.index({ account_id: 1, sandbox: 1, currency: 1, address_key: 1 }, { unique: true });
cryptoAddressSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(cryptoAddressSchema);
cryptoAddressSchema.index({ wallet_id: 1 });
// The chain watcher matches a payment to the addresses holding it (currency + address_key).
cryptoAddressSchema.index({ address_key: 1 });

export type CryptoAddressDoc = InferSchemaType<typeof cryptoAddressSchema> & { _id: string; created_at: Date; updated_at: Date; currency: 'BTC' | 'ETH' };
export const CryptoAddress = model('CryptoAddress', cryptoAddressSchema, 'crypto_addresses');
