/**
 * Keys the deployment makes for itself, `_id` = what the key is for: generated once (the first
 * insert wins) and shared by every process on this database (services/writes/storedKeys.ts).
 */
import { Schema, model } from 'mongoose';

const storedKeySchema = new Schema({ _id: { type: String, required: true }, key: { type: String, required: true }, created_at: { type: Date, required: true } }, { versionKey: false });
export const StoredKey = model('StoredKey', storedKeySchema, 'stored_keys');
