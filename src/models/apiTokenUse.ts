import { Schema, model, InferSchemaType } from 'mongoose';

/**
 * When a token was last used, kept apart from the token: FerretDB v1 writes an update back as the
 * whole document it read, so a usage write on the token racing its revocation could undo the
 * revocation. Only the API writes here (at most once a minute per token and process).
 */
const apiTokenUseSchema = new Schema(
  {
    /** The token's hash, as `ApiToken._id`. */
    _id: { type: String, required: true },
    last_used_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export type ApiTokenUseDoc = InferSchemaType<typeof apiTokenUseSchema> & { _id: string };
export const ApiTokenUse = model('ApiTokenUse', apiTokenUseSchema, 'api_token_uses');
