/**
 * Finance console sessions: sign-in with the same credentials as POST /v1/auth (password, and
 * TOTP when enabled), a random secret in an httpOnly cookie, a CSRF token per session, a fixed
 * lifetime, sign-out, and the switch between production and the account's sandboxes.
 * Expired sessions are deleted when read and, all of them, at each sign-in.
 */
import { randomBytes, createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ConsoleSession, ConsoleSessionDoc } from '../../models/consoleSession';
import { Account, AccountDoc } from '../../models/account';
import { User, UserDoc } from '../../models/user';
import type { Scope } from '../../models/scope';
import { SignInInput, verifySignIn } from '../accounts/accounts';
import { claimChallengeHmacKey } from '../crypto/claimChallenges';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export const newSecret = () => randomBytes(32).toString('base64url');

export interface ConsoleSessionView {
  id: string;
  userId: number;
  email: string | null;
  /** Whether the user has TOTP on: the step-up asks for a code, else for the password. */
  twoFactor: boolean;
  accountId: string;
  accountName: string | null;
  sandbox: string | null;
  sandboxes: string[];
  csrfToken: string;
  expiresAt: Date;
}

/**
 * The key of the console's device cookies (src/cryptography/deviceCookie.ts), the same in every API
 * process: derived from the shared key the claim challenges are signed with, never that key itself.
 */
export async function consoleDeviceKey(configuredClaimKey: string | null): Promise<string> {
  return createHmac('sha256', await claimChallengeHmacKey(configuredClaimKey)).update('console device cookie v1').digest('hex');
}

/** Signs in; answers the cookie secret of a new session (production scope first). */
export async function signIn(input: SignInInput, ttlSeconds: number, clock: () => Date = () => new Date()): Promise<string> {
  const { userId, accountId } = await verifySignIn(input);
  // Counted from after the password check (which may wait for a slot), not from before it.
  const now = clock();
  // Sessions never read again after they expire are swept here: sign-ins are rare, the collection small.
  await ConsoleSession.deleteMany({ expires_at: { $lt: now } });
  const secret = newSecret();
  await ConsoleSession.create({
    _id: sha256(secret),
    user_id: userId,
    account_id: accountId,
    sandbox: null,
    csrf_token: newSecret(),
    expires_at: new Date(now.getTime() + ttlSeconds * 1000),
    created_at: now,
  });
  return secret;
}

/** The session of a cookie secret, or null when unknown or expired (an expired one is deleted). */
export async function resolveSession(secret: string | undefined, now = new Date()): Promise<ConsoleSessionView | null> {
  if (!secret || secret.length > 100) return null;
  const doc = await ConsoleSession.findById(sha256(secret)).lean<ConsoleSessionDoc>();
  if (!doc) return null;
  if (new Date(doc.expires_at).getTime() <= now.getTime()) {
    await ConsoleSession.deleteOne({ _id: doc._id });
    return null;
  }
  const [user, account] = await Promise.all([User.findById(doc.user_id).lean<UserDoc>(), Account.findById(doc.account_id).lean<AccountDoc>()]);
  return {
    id: doc._id,
    userId: doc.user_id,
    email: user?.email ?? null,
    twoFactor: !!user?.otp_secret,
    accountId: doc.account_id,
    accountName: account?.name ?? null,
    sandbox: doc.sandbox ?? null,
    sandboxes: account?.sandboxes ?? [],
    csrfToken: doc.csrf_token,
    expiresAt: new Date(doc.expires_at),
  };
}

export function sessionScope(s: ConsoleSessionView): Scope {
  return { accountId: s.accountId, sandbox: s.sandbox };
}

/** Constant-time comparison of a submitted CSRF token with the expected one. */
export function csrfMatches(expected: string, submitted: unknown): boolean {
  if (typeof submitted !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Production (`null`) or one of the account's sandboxes; anything else is refused (false). */
export async function switchScope(s: ConsoleSessionView, sandbox: string | null): Promise<boolean> {
  if (sandbox !== null && !s.sandboxes.includes(sandbox)) return false;
  await ConsoleSession.updateOne({ _id: s.id }, { $set: { sandbox } });
  return true;
}

export async function signOut(s: ConsoleSessionView): Promise<void> {
  await ConsoleSession.deleteOne({ _id: s.id });
}
