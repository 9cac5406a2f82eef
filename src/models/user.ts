import { Schema, model, InferSchemaType } from 'mongoose';
import { timestamps } from './scope';

const userSchema = new Schema(
  {
    _id: { type: Number, required: true },
    email: { type: String, required: true },
    password_hash: { type: String, required: true },
    /** Base32 TOTP secret when two-factor is enabled. */
    otp_secret: { type: String, default: null },
    /** TOTP time step of the last code accepted by versions before spent steps (models/otpSpentStep.ts); a code at or before it is refused. */
    otp_last_step: { type: Number, default: null },
    account_ids: { type: [String], default: [] },
  },
  { timestamps, versionKey: false },
);
userSchema.index({ email: 1 }, { unique: true });

export type UserDoc = InferSchemaType<typeof userSchema> & { _id: number };
export const User = model('User', userSchema, 'users');

const counterSchema = new Schema({ _id: { type: String, required: true }, seq: { type: Number, required: true } }, { versionKey: false });
export const Counter = model('Counter', counterSchema, 'counters');

/** Next integer in a named sequence (users have integer ids). Not atomic on FerretDB v1 (two callers at once may get one number): the insert of the id decides. */
export async function nextSequence(name: string): Promise<number> {
  const doc = await Counter.findOneAndUpdate({ _id: name }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' }).lean();
  return doc!.seq;
}
