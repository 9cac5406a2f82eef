import { Schema, model, InferSchemaType } from 'mongoose';

/**
 * A finance console session. `_id` is the SHA-256 of the cookie's secret, so the database never
 * holds a usable cookie. `sandbox` is the scope the console shows (null: production), switched by
 * the user among the account's sandboxes. Expired sessions are refused on read and purged then.
 */
const consoleSessionSchema = new Schema(
  {
    _id: { type: String, required: true },
    user_id: { type: Number, required: true },
    account_id: { type: String, required: true },
    sandbox: { type: String, default: null },
    /** Every form of the session carries it; a POST without it is refused. */
    csrf_token: { type: String, required: true },
    expires_at: { type: Date, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);

export type ConsoleSessionDoc = InferSchemaType<typeof consoleSessionSchema> & { _id: string };
export const ConsoleSession = model('ConsoleSession', consoleSessionSchema, 'console_sessions');
