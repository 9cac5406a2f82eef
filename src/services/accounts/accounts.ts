/** Accounts, users and tokens: created out of band by the CLI; POST /v1/auth issues tokens. */
import { Account, AccountDoc } from '../../models/account';
import { User, UserDoc, nextSequence } from '../../models/user';
import { ApiToken, ApiTokenDoc } from '../../models/apiToken';
import { ApiTokenUse, ApiTokenUseDoc } from '../../models/apiTokenUse';
import { OtpSpentStep, OtpSpentStepDoc } from '../../models/otpSpentStep';
import { isDuplicateKey } from '../../models/errors';
import { Scope } from '../../models/scope';
import { newId, ID_PREFIX } from '../../lib/ids';
import { ApiError, AuthFlowError } from '../../lib/errors';
import { DUMMY_HASH, hashPassword, needsRehash, verifyPassword } from '../../cryptography/password';
import { newOtpSecret, otpStep } from '../../cryptography/totp';
import { hashToken, newApiToken, TOKEN_FORMAT } from '../../cryptography/tokens';
import { createWallet } from '../crypto/wallets';
import { normalizeEmail } from '../writes/validate';
import { iso } from '../../presenters/common';
import { listPage } from '../writes/listing';
import { sharedReads } from '../../lib/coalesce';
import { heldForApi, writeHeld } from '../writes/heldWrites';

export const DEFAULT_SANDBOX = 'default';

export interface AuthContext extends Scope {
  userId: number;
  tokenHash: string;
}

export async function issueToken(accountId: string, userId: number, sandbox: string | null): Promise<string> {
  const token = newApiToken();
  await ApiToken.create({ _id: hashToken(token), account_id: accountId, user_id: userId, sandbox, last4: token.slice(-4) });
  return token;
}

export async function createAccount(input: { email: string; password: string; name?: string; totp?: boolean }) {
  const email = normalizeEmail(input.email);
  if (input.password.length < 8) throw ApiError.validation('password', 'is too short (minimum is 8 characters)');
  const otpSecret = input.totp ? newOtpSecret() : null;
  const passwordHash = await hashPassword(input.password);
  let userId = 0;
  for (let attempt = 0; ; attempt++) {
    userId = await nextSequence('users');
    try {
      await User.create({ _id: userId, email, password_hash: passwordHash, otp_secret: otpSecret, account_ids: [] });
      break;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      if (await User.exists({ email })) throw ApiError.validation('email', 'has already been taken');
      // The id was taken: two sign-ups at once both read the sequence before either stepped it
      // (FerretDB v1 writes the increment back over the one it read). Take the next one.
      if (attempt >= 10) throw err;
    }
  }
  const accountId = newId(ID_PREFIX.account);
  await Account.create({ _id: accountId, name: input.name ?? email, owner_user_id: userId, sandboxes: [DEFAULT_SANDBOX] });
  await User.updateOne({ _id: userId }, { $addToSet: { account_ids: accountId } });
  // Each scope has its own account wallet.
  await createWallet({ accountId, sandbox: null }, 'account', accountId);
  await createWallet({ accountId, sandbox: DEFAULT_SANDBOX }, 'account', accountId);
  return {
    account_id: accountId,
    user_id: userId,
    email,
    token: await issueToken(accountId, userId, null),
    sandbox_token: await issueToken(accountId, userId, DEFAULT_SANDBOX),
    ...(otpSecret ? { otp_secret: otpSecret } : {}),
  };
}

/** The email as POST /v1/auth looks it up (and throttles it). */
export function loginEmail(email: string): string {
  return String(email).trim().toLowerCase();
}

/** Spent steps this far behind the newest are removed (codes are accepted one step either side of now). */
const OTP_STEPS_KEPT = 10;

/**
 * Spends a TOTP time step: true only for a step after every one accepted before, so a code (or an
 * older one still inside the drift window) cannot be used twice. The step is taken by an insert
 * (models/otpSpentStep.ts), so two concurrent sign-ins with the same code cannot both win.
 */
export async function spendOtpStep(user: Pick<UserDoc, '_id' | 'otp_last_step'>, step: number): Promise<boolean> {
  // Users from before spent steps had their own documents: the last step accepted then.
  if (user.otp_last_step != null && step <= user.otp_last_step) return false;
  try {
    await OtpSpentStep.create({ _id: `${user._id}#${step}`, user_id: user._id, step, created_at: new Date() });
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
  const spent = await OtpSpentStep.find({ user_id: user._id }).lean<OtpSpentStepDoc[]>();
  const newest = Math.max(...spent.map((s) => s.step));
  if (spent.some((s) => s.step < newest - OTP_STEPS_KEPT)) await OtpSpentStep.deleteMany({ user_id: user._id, step: { $lt: newest - OTP_STEPS_KEPT } });
  // A newer step was spent first (or at once): this older code is refused.
  return newest === step;
}

export interface SignInInput {
  email: string;
  password: string;
  otp_attempt?: string;
}

/**
 * Checks a sign-in (password, and TOTP when enabled) and returns the user and its account. Shared
 * by POST /v1/auth and the finance console, so both accept exactly the same credentials.
 */
export async function verifySignIn(input: SignInInput): Promise<{ userId: number; accountId: string }> {
  const user = await User.findOne({ email: loginEmail(input.email) }).lean<UserDoc>();
  // An unknown email costs the same scrypt, so timing does not tell which accounts exist.
  const ok = await verifyPassword(input.password, user?.password_hash ?? DUMMY_HASH);
  if (!user || !ok) throw new AuthFlowError(401, 'Invalid email or password');
  if (user.otp_secret) {
    if (input.otp_attempt === undefined || input.otp_attempt === '') throw new AuthFlowError(422, 'otp_attempt_required');
    const step = otpStep(user.otp_secret, input.otp_attempt);
    if (step === null || !(await spendOtpStep(user, step))) throw new AuthFlowError(401, 'Invalid two-factor code');
  }
  const accountId = user.account_ids[0];
  if (!accountId) throw new AuthFlowError(401, 'User has no account');
  if (needsRehash(user.password_hash)) {
    // Conditional on the old hash, so a password changed meanwhile is not overwritten.
    await User.updateOne({ _id: user._id, password_hash: user.password_hash }, { $set: { password_hash: await hashPassword(input.password) } });
  }
  return { userId: user._id, accountId };
}

/**
 * Asks a signed-in user again before a money-moving action (the console's step-up): a fresh TOTP
 * code when two-factor is on (spent like a sign-in's, so the code that signed in is refused and
 * the next one accepted), else the password. A wrong one is a 401 `AuthFlowError`, which the
 * sign-in throttle counts as a failure.
 */
export async function verifyStepUp(userId: number, input: { password?: string; otp_attempt?: string }): Promise<void> {
  const user = await User.findById(userId).lean<UserDoc>();
  if (user?.otp_secret) {
    const step = otpStep(user.otp_secret, input.otp_attempt ?? '');
    if (step === null || !(await spendOtpStep(user, step))) throw new AuthFlowError(401, 'Invalid or already used two-factor code; enter the next code from your authenticator app');
    return;
  }
  const ok = await verifyPassword(input.password ?? '', user?.password_hash ?? DUMMY_HASH);
  if (!user || !ok) throw new AuthFlowError(401, 'Wrong password');
}

/** POST /v1/auth: password (and TOTP when enabled) for a new production token. */
export async function authenticate(input: SignInInput): Promise<{ token: string }> {
  const { userId, accountId } = await verifySignIn(input);
  return { token: await issueToken(accountId, userId, null) };
}

/** How often a process records that a token was used (`last_used_at`). */
const TOKEN_USE_EVERY_MS = 60_000;

/**
 * How the API reads tokens: `read` is the token as stored now, by its hash (null if unknown), a
 * read that starts after the call; `used` records a use (best effort, not awaited).
 */
export interface TokenReader {
  read(hash: string): Promise<ApiTokenDoc | null>;
  used(hash: string): void;
}

/**
 * The API's token reader, one per app. Concurrent requests with one token share a read of it that
 * starts after each request arrived (a client's burst reads its token once per round trip, not once
 * per request), so a token revoked before a request arrives is refused, as the contract wants
 * ("revokes it at once"). The shared document is read-only. Uses are recorded in `api_token_uses`,
 * never on the token (see ApiTokenUse), at most once a minute per token by this process.
 */
export function sharedTokenReader(): TokenReader {
  const recorded = new Map<string, number>();
  return {
    // By _id alone (FerretDB's fast path).
    read: sharedReads((hash) => ApiToken.findById(hash).lean<ApiTokenDoc>()),
    used(hash) {
      const now = Date.now();
      if (now - (recorded.get(hash) ?? 0) < TOKEN_USE_EVERY_MS) return;
      // Bounded: forgetting only means one more write per token.
      if (recorded.size >= 10_000) recorded.clear();
      recorded.set(hash, now);
      ApiTokenUse.collection
        .updateOne({ _id: hash } as never, { $set: { last_used_at: new Date(now) } }, { upsert: true })
        .catch(() => recorded.delete(hash));
    },
  };
}

/** Looks a bearer token up on every request, so a revocation counts on the next one. */
export async function resolveToken(token: string, tokens: TokenReader): Promise<AuthContext | null> {
  if (!TOKEN_FORMAT.test(token)) return null;
  const hash = hashToken(token);
  // Revocation checked here, on a read that started after the request.
  const doc = await tokens.read(hash);
  if (!doc || doc.revoked_at) return null;
  tokens.used(hash);
  return { accountId: doc.account_id, sandbox: doc.sandbox ?? null, userId: doc.user_id, tokenHash: hash };
}

export async function revokeToken(token: string): Promise<boolean> {
  const res = await ApiToken.updateOne({ _id: hashToken(token), revoked_at: null }, { $set: { revoked_at: new Date() } });
  return res.modifiedCount === 1;
}

export async function createTokenFor(accountId: string, sandbox: string | null): Promise<string> {
  const account = await Account.findById(accountId).lean<AccountDoc>();
  if (!account) throw ApiError.notFound('Account not found', 'account_id');
  if (sandbox !== null && !account.sandboxes.includes(sandbox)) {
    // Held (services/writes/heldWrites.ts): a rename through the API at the same moment, or another new
    // sandbox, is not written back over.
    const held = await writeHeld<AccountDoc>(Account, accountId, (current) => ((current.sandboxes ?? []).includes(sandbox) ? null : { sandboxes: [...(current.sandboxes ?? []), sandbox] }), { seen: account });
    heldForApi(held, 'Account', 'account_id');
    await createWallet({ accountId, sandbox }, 'account', accountId);
  }
  return issueToken(accountId, account.owner_user_id, sandbox);
}

function presentAccount(a: AccountDoc) {
  return { id: a._id, name: a.name, sandboxes: a.sandboxes, created_at: iso(a.created_at), updated_at: iso(a.updated_at) };
}

export async function me(auth: AuthContext) {
  const [user, account, token, use] = await Promise.all([
    User.findById(auth.userId).lean<UserDoc>(),
    Account.findById(auth.accountId).lean<AccountDoc>(),
    ApiToken.findById(auth.tokenHash).lean<ApiTokenDoc>(),
    ApiTokenUse.findById(auth.tokenHash).lean<ApiTokenUseDoc>(),
  ]);
  // Tokens used before uses were kept apart carry their last use on the token itself.
  const lastUsed = use?.last_used_at ?? token?.last_used_at ?? null;
  return {
    id: auth.userId,
    email: user?.email ?? null,
    account: { id: auth.accountId, name: account?.name ?? null },
    sandbox: auth.sandbox,
    token: { last4: token?.last4 ?? null, last_used_at: iso(lastUsed) },
  };
}

export async function listAccounts(auth: AuthContext, page: number) {
  const ids = (await User.findById(auth.userId).lean<UserDoc>())?.account_ids ?? [];
  const { items, pagination } = await listPage<AccountDoc>(Account, { _id: { $in: ids } }, page);
  return { accounts: items.map(presentAccount), pagination };
}

async function memberAccount(auth: AuthContext, id: string): Promise<AccountDoc> {
  const user = await User.findById(auth.userId).lean<UserDoc>();
  if (!user?.account_ids.includes(id)) throw ApiError.notFound('Account not found', 'id');
  const account = await Account.findById(id).lean<AccountDoc>();
  if (!account) throw ApiError.notFound('Account not found', 'id');
  return account;
}

export async function getAccount(auth: AuthContext, id: string) {
  return presentAccount(await memberAccount(auth, id));
}

export async function renameAccount(auth: AuthContext, id: string, name: string) {
  await memberAccount(auth, id);
  const trimmed = name.trim();
  if (!trimmed) throw ApiError.validation('name', "can't be blank");
  return presentAccount(heldForApi(await writeHeld<AccountDoc>(Account, id, () => ({ name: trimmed })), 'Account', 'id'));
}
