import { Schema, model } from 'mongoose';

/**
 * Proof-of-work solutions already used for a claim, one per challenge: `_id` is the challenge's
 * HMAC signature as decoded from the solution, so a re-encoded copy of a solution (whitespace,
 * reordered JSON keys, a number written as a string) is the same record. The insert on `_id` is
 * the atomic "spend" every API process agrees on. Kept until the challenge expires; no TTL index
 * (FerretDB v1 has none): expired records are removed when a solution is spent.
 */
const spentSolutionSchema = new Schema(
  {
    _id: { type: String, required: true },
    link_id: { type: String, required: true },
    expires_at: { type: Date, required: true },
  },
  { versionKey: false },
);
spentSolutionSchema.index({ expires_at: 1 });
export const SpentClaimSolution = model('SpentClaimSolution', spentSolutionSchema, 'claim_challenge_solutions');

/**
 * The challenge HMAC key used when CLAIM_CHALLENGE_HMAC_KEY is not set: generated once (the
 * first insert wins) and shared by every process on this database.
 */
const challengeKeySchema = new Schema({ _id: { type: String, required: true }, key: { type: String, required: true }, created_at: { type: Date, required: true } }, { versionKey: false });
export const ClaimChallengeKey = model('ClaimChallengeKey', challengeKeySchema, 'claim_challenge_keys');
