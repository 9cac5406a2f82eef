/**
 * The proof of work a public claim carries (ALTCHA format, altcha-lib v1 API): challenges signed
 * with a key every API process shares, and solutions spent once (by their signature).
 */
import { randomBytes } from 'node:crypto';
import * as altchaV1 from 'altcha-lib/v1';
import { isDuplicateKey } from '../../models/errors';
import { storedKey } from '../writes/storedKeys';
import { ClaimChallengeKey, SpentClaimSolution } from '../../models/claimChallenge';


interface AltchaV1 {
  createChallenge(o: { hmacKey: string; maxnumber?: number; expires?: Date; params?: Record<string, string>; algorithm?: 'SHA-256' }): Promise<ClaimChallenge>;
  verifySolution(payload: SolutionPayload, hmacKey: string, checkExpires?: boolean): Promise<boolean>;
  extractParams(payload: SolutionPayload): Record<string, string>;
}
interface SolutionPayload {
  algorithm: string;
  challenge: string;
  number: number;
  salt: string;
  signature: string;
}
// The classic API at the `altcha-lib/v1` subpath (typed by src/types/altcha-lib-v1.d.ts), used through this narrower shape.
const altcha = altchaV1 as unknown as AltchaV1;

export interface ClaimChallenge {
  algorithm: string;
  challenge: string;
  maxnumber?: number;
  salt: string;
  signature: string;
}

/** Challenge difficulty: the secret number is below this (about 0.1-0.5 s in a browser). */
export const CHALLENGE_MAX_NUMBER = 50_000;
const CHALLENGE_TTL_MS = 10 * 60_000;
const STORED_KEY_ID = 'claim_challenge_hmac_key';

/**
 * The key challenges are signed with: CLAIM_CHALLENGE_HMAC_KEY, else one random key kept in the
 * database (the first insert wins), so every API process issues and verifies the same challenges.
 */
export async function claimChallengeHmacKey(configured: string | null): Promise<string> {
  return configured ?? storedKey(ClaimChallengeKey, STORED_KEY_ID);
}

/** A challenge bound to one link (its id in the signed salt params), valid 10 minutes. */
export async function createClaimChallenge(linkId: string, hmacKey: string): Promise<ClaimChallenge> {
  return altcha.createChallenge({ hmacKey, maxnumber: CHALLENGE_MAX_NUMBER, expires: new Date(Date.now() + CHALLENGE_TTL_MS), params: { link: linkId }, algorithm: 'SHA-256' });
}

/**
 * The base64 JSON payload of a solved challenge: valid signature, solved, not expired, for this
 * link, not used before. "Used" is keyed by the decoded signature (one per challenge), never by
 * the payload text, which has many encodings of one solution.
 */
export async function verifyClaimSolution(payload: unknown, linkId: string, hmacKey: string): Promise<boolean> {
  if (typeof payload !== 'string' || payload.length === 0 || payload.length > 4096) return false;
  let solution: SolutionPayload;
  try {
    solution = JSON.parse(atob(payload)) as SolutionPayload;
    if (typeof solution?.signature !== 'string' || !(await altcha.verifySolution(solution, hmacKey, true)) || altcha.extractParams(solution).link !== linkId) return false;
  } catch {
    return false;
  }
  const expiresAt = new Date(Number(altcha.extractParams(solution).expires) * 1000 || Date.now() + CHALLENGE_TTL_MS);
  try {
    await SpentClaimSolution.create({ _id: solution.signature, link_id: linkId, expires_at: expiresAt });
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
  // Past their challenge's expiry, records can no longer matter (the challenge itself is refused).
  await SpentClaimSolution.deleteMany({ expires_at: { $lt: new Date() } });
  return true;
}
