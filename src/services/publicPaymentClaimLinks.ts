/**
 * Payment claim links, the customer's side (no token: the secret is the credential): what to
 * pay and to which addresses, the live payment status, the pay page's QR codes.
 */
import { PaymentClaimLink, PaymentClaimLinkDoc, PaymentClaimLinkSecret } from '../models/paymentClaimLink';
import { CryptoAddress, CryptoAddressDoc } from '../models/cryptoAddress';
import { Wallet, WalletDoc } from '../models/wallet';
import { Invoice, InvoiceDoc, OPEN_INVOICE_STATUSES } from '../models/invoice';
import { ChainCursor, ChainCursorDoc, ChainPaymentDoc, ChainPaymentRecord } from '../models/chainPayment';
import { Price, PriceDoc } from '../models/price';
import { scopeOfDoc, findInScope, inScope } from '../models/scope';
import { ApiError } from '../lib/errors';
import { cryptoAmountError, formatCryptoAmount, Dec } from '../cryptocurrency/amounts';
import { explorerFor, CryptoCurrency } from '../cryptocurrency/addresses';
import { paymentUri } from '../cryptocurrency/paymentUri';
import { derivePaymentStatus, PendingChainPayment } from '../cryptocurrency/paymentStatus';
import { centsToAmount, sumAmounts } from '../billing/money';
import { amountDue as invoiceAmountDue } from '../billing/lineRemoval';
import { linkUsable, effectiveLinkStatus } from '../presenters/paymentClaimLink';
import type { Dependencies } from '../dependencies';
import { linkSecretKey } from './paymentClaimLinks';
import { ClaimChallenge, claimChallengeHmacKey, createClaimChallenge } from './claimChallenges';

/** The link `secret` opens, or null. */
export async function findLinkBySecret(secret: string): Promise<PaymentClaimLinkDoc | null> {
  const ref = typeof secret === 'string' && secret.length >= 32 && secret.length <= 100 ? await PaymentClaimLinkSecret.findById(linkSecretKey(secret)).lean<{ link_id: string }>() : null;
  const link = ref ? await PaymentClaimLink.findById(ref.link_id).lean<PaymentClaimLinkDoc>() : null;
  return link && link.secret === secret ? link : null;
}

export async function linkBySecret(secret: string): Promise<PaymentClaimLinkDoc> {
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

export async function payToAddresses(link: PaymentClaimLinkDoc): Promise<CryptoAddressDoc[]> {
  return (await payToWallet(link)).addresses;
}

/**
 * The invoices a link pays: the customer's open ones, and those paid since the link was made
 * (so the page can show them paid). Oldest due date first.
 */
async function coveredInvoices(link: PaymentClaimLinkDoc): Promise<InvoiceDoc[]> {
  const scope = scopeOfDoc(link);
  const since = new Date(link.created_at).getTime();
  // Only `customer_id` reaches SQL on FerretDB (see docs/storage.md); the rest is filtered here.
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
    // Never below zero: an invoice paid beyond its total (its lines removed since) must not lower what the others ask.
    amount_due: i.status === 'paid' ? '0.00' : invoiceAmountDue(i.total_amount, i.amount_paid ?? '0.00'),
  }));
  const price = link.price_id ? await findInScope<PriceDoc>(Price, scope, link.price_id) : null;
  const amountDue = price ? centsToAmount(price.amount) : sumAmounts(invoices.map((i) => i.amount_due));
  const paymentStatus = derivePaymentStatus({ invoiceStatuses: covered.map((i) => i.status), pending: await pendingChainPayments(deps, wallet) });
  const quotes: { currency: CryptoCurrency; usd_price: string; amount: string }[] = [];
  for (const currency of new Set(wallet.addresses.map((a) => a.currency))) {
    // The refresher's last price, not a lookup per visitor. No quote without a price; the page still shows the addresses.
    const usd = await deps.spotPrices.usdPrice(currency);
    if (usd === null) continue;
    const amount = new Dec(amountDue).div(usd).toDecimalPlaces(currency === 'BTC' ? 8 : 18, Dec.ROUND_UP);
    quotes.push({ currency, usd_price: usd, amount: formatCryptoAmount(currency, amount) });
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
