import { Schema, model, InferSchemaType } from 'mongoose';

/**
 * A TOTP time step a user's sign-in has spent (`_id` = `<user id>#<step>`): the insert on `_id`
 * is atomic, so two sign-ins with one code at once cannot both win. (A conditional update of the
 * user was not: FerretDB v1 checks an update's filter against a read and writes the whole
 * document back after, so both matched.) Steps more than a few minutes old are removed by the
 * next spend of the same user.
 */
const otpSpentStepSchema = new Schema(
  {
    _id: { type: String, required: true },
    user_id: { type: Number, required: true },
    step: { type: Number, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
otpSpentStepSchema.index({ user_id: 1 });

export type OtpSpentStepDoc = InferSchemaType<typeof otpSpentStepSchema> & { _id: string };
export const OtpSpentStep = model('OtpSpentStep', otpSpentStepSchema, 'otp_spent_steps');
