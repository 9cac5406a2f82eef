/**
 * Payment claim links: a secret URL (`<PUBLIC_URL>/pay/<secret>`) through which a customer
 * submits a payment claim. Active until used up (`max_uses`) or past `expires_at`; one
 * workflow per link marks it expired at `expires_at`. The public side (what to pay, the
 * ALTCHA proof-of-work challenge, claim submission) lives here too.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as altchaV1 from 'altcha-lib/v1';
import { PaymentClaimLink, PaymentClaimLinkDoc, PaymentClaimLinkSecret, PaymentClaimLinkUse } from '../models/paymentClaimLink';
import { isDuplicateKey } from '../models/errors';
import { PaymentClaim, PaymentClaimDoc } from '../models/paymentClaim';
import { ClaimChallengeKey, SpentClaimSolution } from '../models/claimChallenge';
import { CryptoAddress, CryptoAddressDoc } from '../models/cryptoAddress';
import { Wallet, WalletDoc } from '../models/wallet';
import { Invoice, InvoiceDoc, OPEN_INVOICE_STATUSES } from '../models/invoice';
import { ChainCursor, ChainCursorDoc, ChainPaymentDoc, ChainPaymentRecord } from '../models/chainPayment';
import { Price, PriceDoc } from '../models/price';
import { Scope, scopeFilter, scopeOfDoc, findInScope, inScope } from '../models/scope';
import { newId, ID_PREFIX } from '../lib/ids';
import { ApiError } from '../lib/errors';
import { parseDateTime } from '../lib/dates';
import { cryptoAmountError, formatCryptoAmount, Dec } from '../cryptocurrency/amounts';
import { explorerFor, isSupportedCurrency, validateAddress, CryptoCurrency } from '../cryptocurrency/addresses';
import { paymentUri } from '../cryptocurrency/paymentUri';
import { derivePaymentStatus, PendingChainPayment } from '../cryptocurrency/paymentStatus';
import { centsToAmount, sumAmounts, subtractAmounts } from '../billing/money';
import { presentPaymentClaimLink, linkUsable, effectiveLinkStatus } from '../presenters/paymentClaimLink';
import { presentPaymentClaim } from '../presenters/paymentClaim';
import { recordEvent } from './events';
import { createListed, listScopePage, recountListSlots } from './listing';
import { findCustomer } from './customers';
import type { Dependencies } from '../dependencies';

const DAY_MS = 24 * 60 * 60 * 1000;

// ---- proof of work (ALTCHA format, altcha-lib v1 API) --------------------------------------

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
  if (configured) return configured;
  const stored = await ClaimChallengeKey.findById(STORED_KEY_ID).lean<{ key: string }>();
  if (stored) return stored.key;
  try {
    await ClaimChallengeKey.create({ _id: STORED_KEY_ID, key: randomBytes(32).toString('hex'), created_at: new Date() });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  return (await ClaimChallengeKey.findById(STORED_KEY_ID).lean<{ key: string }>())!.key;
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

export interface PaymentClaimLinkInput {
  customer_id: string;
  expires_at?: string;
  max_uses?: number;
  metadata?: string | null;
  price_id?: string | null;
}

const secretKey = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** 32 random bytes, base64url: 43 URL-safe characters. */
function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

async function findLink(scope: Scope, id: string): Promise<PaymentClaimLinkDoc> {
  const link = await findInScope<PaymentClaimLinkDoc>(PaymentClaimLink, scope, id);
  if (!link) throw ApiError.notFound('Payment claim link not found', 'id');
  return link;
}

/** PUBLIC_URL from config: the base of the link's `url`. */
const present = (deps: Dependencies, l: PaymentClaimLinkDoc) => presentPaymentClaimLink(l, deps.config.publicUrl);

export async function createPaymentClaimLink(deps: Dependencies, scope: Scope, input: PaymentClaimLinkInput) {
  await findCustomer(scope, input.customer_id, 'customer_id');
  const maxUses = input.max_uses ?? 1;
  if (!Number.isInteger(maxUses) || maxUses <= 0) throw ApiError.invalid('Max uses must be greater than 0', 'max_uses', { max_uses: ['must be greater than 0'] });
  let expiresAt = new Date(Date.now() + DAY_MS);
  if (input.expires_at !== undefined) {
    expiresAt = parseDateTime(input.expires_at, 'expires_at');
    if (expiresAt.getTime() <= Date.now()) throw ApiError.validation('expires_at', 'must be in the future');
  }
  if (input.price_id) {
    const price = await findInScope<PriceDoc>(Price, scope, input.price_id);
    if (!price) throw ApiError.notFound(`Price not found: ${input.price_id}`, 'price_id');
  }
  const secret = newSecret();
  const id = newId(ID_PREFIX.paymentClaimLink);
  // Recorded before the link, so a crash between the two cannot lose its expiry workflow.
  const workflow = await deps.workflows.claimLink.plan({ _id: id, expires_at: expiresAt });
  await PaymentClaimLinkSecret.create({ _id: secretKey(secret), link_id: id });
  const link = (
    await createListed(PaymentClaimLink, scope, {
      _id: id,
      ...scopeFilter(scope),
      customer_id: input.customer_id,
      status: 'active',
      secret,
      expires_at: expiresAt,
      max_uses: maxUses,
      use_count: 0,
      metadata: input.metadata ?? null,
      price_id: input.price_id ?? null,
    })
  ).toObject() as PaymentClaimLinkDoc;
  await workflow.start();
  return present(deps, link);
}

export async function getPaymentClaimLink(deps: Dependencies, scope: Scope, id: string) {
  return present(deps, await findLink(scope, id));
}

export async function listPaymentClaimLinks(deps: Dependencies, scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<PaymentClaimLinkDoc>(PaymentClaimLink, scope, page);
  return { payment_claim_links: items.map((l) => present(deps, l)), pagination };
}

/** Removes a link (its secret first, so `/pay/<secret>` answers 404 at once) and ends its workflow. */
async function removeLink(deps: Dependencies, link: PaymentClaimLinkDoc): Promise<void> {
  await PaymentClaimLinkSecret.deleteOne({ _id: secretKey(link.secret) });
  await PaymentClaimLink.deleteOne({ _id: link._id });
  await recountListSlots(PaymentClaimLink, [link]);
  await deps.workflows.claimLink.close(link._id);
}

export async function deletePaymentClaimLink(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  await removeLink(deps, await findLink(scope, id));
}

/** Customer deletion: every link of the customer goes, the same way as deleting each one. */
export async function deleteCustomerPaymentClaimLinks(deps: Dependencies, scope: Scope, customerId: string): Promise<void> {
  const links = await PaymentClaimLink.find({ ...scopeFilter(scope), customer_id: customerId }).lean<PaymentClaimLinkDoc[]>();
  for (const link of links) await removeLink(deps, link);
}

/** The workflow's activity at `expires_at`: active -> expired. True when the link is expired. */
export async function expirePaymentClaimLink(linkId: string): Promise<boolean> {
  const link = await PaymentClaimLink.findById(linkId).lean<PaymentClaimLinkDoc>();
  if (!link) return false;
  if (link.status !== 'active') return link.status === 'expired';
  await PaymentClaimLink.updateOne({ _id: linkId }, { $set: { status: 'expired' } });
  return true;
}

// ---- public side -------------------------------------------------------------------------

/** The link `secret` opens, or null. */
async function findLinkBySecret(secret: string): Promise<PaymentClaimLinkDoc | null> {
  const ref = typeof secret === 'string' && secret.length >= 32 && secret.length <= 100 ? await PaymentClaimLinkSecret.findById(secretKey(secret)).lean<{ link_id: string }>() : null;
  const link = ref ? await PaymentClaimLink.findById(ref.link_id).lean<PaymentClaimLinkDoc>() : null;
  return link && link.secret === secret ? link : null;
}

async function linkBySecret(secret: string): Promise<PaymentClaimLinkDoc> {
  const link = await findLinkBySecret(secret);
  if (!link) throw ApiError.notFound('Payment claim link not found', 'secret');
  return link;
}

/** True when `secret` opens a link (of any status): the pay page answers 404 otherwise. */
export async function paymentClaimLinkExists(secret: string): Promise<boolean> {
  return (await findLinkBySecret(secret)) !== null;
}

/** The addresses a link's customer pays to, and whose they are (`null`: none set up). */
interface PayToWallet {
  owner: 'customer' | 'account' | null;
  addresses: CryptoAddressDoc[];
}

/**
 * Where the customer can pay: the customer's wallet addresses, else the account wallet's;
 * `owner` says whose, since only payments to the customer's own addresses are theirs for sure.
 */
async function payToWallet(link: PaymentClaimLinkDoc): Promise<PayToWallet> {
  const scope = scopeOfDoc(link);
  const wallets = (await Wallet.find({ owner_id: { $in: [link.customer_id, link.account_id] } }).lean<WalletDoc[]>()).filter((w) => inScope(w, scope));
  const customerWallet = wallets.find((w) => w.owner_type === 'customer' && w.owner_id === link.customer_id);
  const accountWallet = wallets.find((w) => w.owner_type === 'account');
  for (const [owner, w] of [['customer', customerWallet], ['account', accountWallet]] as const) {
    if (!w) continue;
    const addresses = await CryptoAddress.find({ wallet_id: w._id }).sort({ created_at: 1, _id: 1 }).lean<CryptoAddressDoc[]>();
    if (addresses.length > 0) return { owner, addresses };
  }
  return { owner: null, addresses: [] };
}

async function payToAddresses(link: PaymentClaimLinkDoc): Promise<CryptoAddressDoc[]> {
  return (await payToWallet(link)).addresses;
}

/**
 * The invoices a link pays: the customer's open ones, and those paid since the link was made
 * (so the page can show them paid). Oldest due date first.
 */
async function coveredInvoices(link: PaymentClaimLinkDoc): Promise<InvoiceDoc[]> {
  const scope = scopeOfDoc(link);
  const since = new Date(link.created_at).getTime();
  // Only `customer_id` reaches SQL on FerretDB (see README, "Storage"); the rest is filtered here.
  return (await Invoice.find({ customer_id: link.customer_id }).lean<InvoiceDoc[]>())
    .filter((i) => inScope(i, scope))
    .filter((i) => OPEN_INVOICE_STATUSES.includes(i.status) || (i.status === 'paid' && new Date(i.updated_at).getTime() >= since))
    .sort((a, b) => (a.due_date < b.due_date ? -1 : a.due_date > b.due_date ? 1 : 0));
}

/**
 * Payments seen on chain to the customer's own addresses and not recorded yet, with the
 * watcher's last scanned height. An account-wallet address is shared by every customer, so
 * what arrives there is not shown (it may be someone else's payment).
 */
async function pendingChainPayments(deps: Dependencies, wallet: PayToWallet): Promise<PendingChainPayment[]> {
  if (wallet.owner !== 'customer') return [];
  const out: PendingChainPayment[] = [];
  for (const currency of new Set(wallet.addresses.map((a) => a.currency as CryptoCurrency))) {
    const keys = new Set(wallet.addresses.filter((a) => a.currency === currency).map((a) => a.address_key));
    // `{currency, status}` is pushed down and pending payments are few; the address is matched here.
    const pending = (await ChainPaymentRecord.find({ currency, status: 'pending' }).lean<ChainPaymentDoc[]>()).filter((p) => keys.has(p.address_key));
    if (pending.length === 0) continue;
    const cursor = await ChainCursor.findById(currency).lean<ChainCursorDoc>();
    for (const p of pending) out.push({ block_height: p.block_height, scanned_height: cursor?.height ?? null, required: deps.config.chains[currency].confirmations });
  }
  return out;
}

/** What anyone holding the secret of a used or expired link sees: its status, nothing of the customer's. */
export interface ClosedPublicLink {
  object: 'payment_claim_link';
  status: string;
  usable: false;
  expired: boolean;
}

/** `GET /v1/public/payment_claim_links/:secret`: what to pay, where, and the challenge (an unusable link: only its status). */
export async function getPublicPaymentClaimLink(deps: Dependencies, secret: string) {
  const link = await linkBySecret(secret);
  if (!linkUsable(link)) {
    const status = effectiveLinkStatus(link);
    return { object: 'payment_claim_link', status, usable: false, expired: status === 'expired' } satisfies ClosedPublicLink;
  }
  const scope = scopeOfDoc(link);
  const sandbox = scope.sandbox !== null;
  const wallet = await payToWallet(link);
  const covered = await coveredInvoices(link);
  const invoices = covered.map((i) => ({
    id: i._id,
    status: i.status,
    due_date: i.due_date,
    total_amount: i.total_amount,
    // Paid within the slippage margin can leave cents on paper: nothing is due on a paid invoice.
    amount_due: i.status === 'paid' ? '0.00' : subtractAmounts(i.total_amount, i.amount_paid ?? '0.00'),
  }));
  const price = link.price_id ? await findInScope<PriceDoc>(Price, scope, link.price_id) : null;
  const amountDue = price ? centsToAmount(price.amount) : sumAmounts(invoices.map((i) => i.amount_due));
  const paymentStatus = derivePaymentStatus({ invoiceStatuses: covered.map((i) => i.status), pending: await pendingChainPayments(deps, wallet) });
  const quotes: { currency: CryptoCurrency; usd_price: string; amount: string }[] = [];
  for (const currency of new Set(wallet.addresses.map((a) => a.currency))) {
    try {
      const usd = await deps.priceOracle.usdPrice(currency, new Date());
      const amount = new Dec(amountDue).div(usd).toDecimalPlaces(currency === 'BTC' ? 8 : 18, Dec.ROUND_UP);
      quotes.push({ currency, usd_price: usd, amount: formatCryptoAmount(currency, amount) });
    } catch {
      // No quote without a price; the page still shows the addresses.
    }
  }
  return {
    object: 'payment_claim_link' as const,
    status: effectiveLinkStatus(link),
    usable: true as const,
    expired: false,
    expires_at: new Date(link.expires_at).toISOString(),
    max_uses: link.max_uses,
    use_count: link.use_count ?? 0,
    price: price ? { id: price._id, amount: centsToAmount(price.amount), currency: (price as unknown as { currency?: string }).currency ?? 'usd' } : null,
    amount_due: amountDue,
    invoices,
    payment_status: paymentStatus,
    pay_to: wallet.addresses.map((a) => {
      // The estimate fills the URI; with nothing due (or no price) the wallet asks for the amount.
      const quoted = quotes.find((q) => q.currency === a.currency)?.amount;
      const amount = quoted && new Dec(quoted).gt(0) ? quoted : null;
      return {
        currency: a.currency,
        address: a.address,
        explorer: explorerFor(a.currency, a.address, sandbox),
        amount,
        payment_uri: paymentUri(a.currency, a.address, amount),
        qr_code_url: qrCodePath(secret, a.address, amount),
      };
    }),
    quotes,
    verification_required: deps.config.claimVerification,
    challenge: deps.config.claimVerification ? await createClaimChallenge(link._id, await claimChallengeHmacKey(deps.config.claimChallengeHmacKey)) : (null as ClaimChallenge | null),
  };
}

export type PublicPaymentClaimLink = Awaited<ReturnType<typeof getPublicPaymentClaimLink>>;

/** The pay page's view of `secret`: what the public endpoint answers, or null for an unknown secret. */
export async function findPublicPaymentClaimLink(deps: Dependencies, secret: string): Promise<PublicPaymentClaimLink | null> {
  if (!(await paymentClaimLinkExists(secret))) return null;
  return getPublicPaymentClaimLink(deps, secret);
}

/** Where the page finds the QR code of an address (relative: the page is served by this API). */
function qrCodePath(secret: string, address: string, amount: string | null): string {
  const q = new URLSearchParams({ address, ...(amount ? { amount } : {}) });
  return `/pay/${encodeURIComponent(secret)}/qr.svg?${q}`;
}

/**
 * The payment URI a pay page QR code shows: `address` must be one of the usable link's
 * addresses; `amount` (the estimate the page shows) a valid amount of its currency, or absent.
 */
export async function payPageQrUri(secret: string, address: string, amount: string | null): Promise<string> {
  const link = await linkBySecret(secret);
  if (!linkUsable(link)) throw ApiError.notFound('Payment claim link not usable', 'secret');
  const target = (await payToAddresses(link)).find((a) => a.address === address);
  if (!target) throw ApiError.notFound('Not an address of this payment link', 'address');
  if (amount !== null) {
    const err = cryptoAmountError(target.currency, amount);
    if (err) throw ApiError.invalid(`Amount is invalid: ${err}`, 'amount');
  }
  return paymentUri(target.currency, target.address, amount);
}

export interface PublicClaimInput {
  transaction_id: string;
  amount: string;
  currency: string;
  to_address: string;
  verification?: string;
}

/** `POST /v1/public/payment_claim_links/:secret/claims`: one use of the link, a pending claim. */
export async function submitPaymentClaim(deps: Dependencies, secret: string, input: PublicClaimInput) {
  let link = await linkBySecret(secret);
  const unusable = () => ApiError.invalid(`This payment link can no longer be used (${effectiveLinkStatus(link)})`, 'secret');
  if (!linkUsable(link)) throw unusable();
  if (!isSupportedCurrency(input.currency)) throw ApiError.invalid(`Currency not supported: ${input.currency}`, 'currency');
  const currency = input.currency;
  const amountError = cryptoAmountError(currency, input.amount);
  if (amountError) throw ApiError.invalid(`Amount is invalid: ${amountError}`, 'amount');
  const transactionId = input.transaction_id.trim();
  if (!transactionId) throw ApiError.validation('transaction_id', "can't be blank");
  const checked = validateAddress(currency, input.to_address, link.sandbox ? 'test' : 'mainnet');
  const target = checked.ok ? (await payToAddresses(link)).find((a) => a.currency === currency && a.address_key === checked.canonical) : undefined;
  if (!target) throw ApiError.invalid('The receiving address is not one of the addresses of this payment link', 'to_address');
  // Last, so a form error does not spend the solved challenge.
  if (deps.config.claimVerification && !(await verifyClaimSolution(input.verification, link._id, await claimChallengeHmacKey(deps.config.claimChallengeHmacKey)))) {
    throw new ApiError(422, 'invalid_request_error', 'verification_failed', 'Human verification failed; solve a new challenge and retry', 'verification');
  }

  // One use: taking use n is an insert on `<link>#<n>` (atomic), so concurrent submissions cannot exceed max_uses.
  for (let attempt = 0; ; attempt++) {
    const n = link.use_count ?? 0;
    const used = n + 1;
    const now = new Date();
    let taken = true;
    try {
      await PaymentClaimLinkUse.create({ _id: `${link._id}#${n}`, link_id: link._id, created_at: now });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      taken = false;
    }
    const updated = taken
      ? await PaymentClaimLink.findOneAndUpdate(
          { _id: link._id },
          { $set: { use_count: used, used_at: now, status: used >= link.max_uses ? 'used' : 'active' } },
          { returnDocument: 'after' },
        ).lean<PaymentClaimLinkDoc>()
      : null;
    if (updated) {
      link = updated;
      break;
    }
    await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
    const fresh = await PaymentClaimLink.findById(link._id).lean<PaymentClaimLinkDoc>();
    if (!fresh || !linkUsable(fresh) || attempt >= 20) {
      if (fresh) link = fresh;
      throw unusable();
    }
    link = fresh;
  }
  const scope = scopeOfDoc(link);
  const claim = (
    await PaymentClaim.create({
      _id: newId(ID_PREFIX.paymentClaim),
      ...scopeFilter(scope),
      status: 'pending',
      customer_id: link.customer_id,
      payment_claim_link_id: link._id,
      currency,
      amount: input.amount,
      transaction_id: transactionId,
      to_address_id: target._id,
      to_address: target.address,
    })
  ).toObject() as PaymentClaimDoc;
  await PaymentClaimLink.updateOne({ _id: link._id }, { $set: { crypto_payment_claim_id: claim._id } });
  const out = presentPaymentClaim(claim);
  await recordEvent(scope, 'payment_claim.submitted', out);
  if (link.status === 'used') await deps.workflows.claimLink.close(link._id);
  return out;
}
