import { Schema, model, InferSchemaType } from 'mongoose';
import { timestamps } from './scope';

const apiTokenSchema = new Schema(
  {
    /** SHA-256 hex of the token; the token itself is never stored. */
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    user_id: { type: Number, required: true },
    sandbox: { type: String, default: null },
    last4: { type: String, required: true },
    /** Written by earlier versions only: uses are kept in `api_token_uses` (ApiTokenUse). */
    last_used_at: { type: Date, default: null },
    revoked_at: { type: Date, default: null },
  },
  { timestamps, versionKey: false },
);

export type ApiTokenDoc = InferSchemaType<typeof apiTokenSchema> & { _id: string };
export const ApiToken = model('ApiToken', apiTokenSchema, 'api_tokens');
