/**
 * Payment claim links, the customer's side (no token: the secret is the credential): what to
 * pay and to which addresses, the live payment status, the pay page's QR codes.
 */
import { PaymentClaimLink, PaymentClaimLinkDoc, PaymentClaimLinkSecret } from '../../models/paymentClaimLink';
import type { CryptoAddressDoc } from '../../models/cryptoAddress';
import { findInvoicesPaidSince, findOpenInvoices, InvoiceDoc } from '../../models/invoice';
import { Price, PriceDoc } from '../../models/price';
import { scopeOfDoc, findInScope, inScope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { derivePaymentStatus } from '../../cryptocurrency/paymentStatus';
import { centsToAmount, sumAmounts } from '../../billing/money';
import { amountDue as invoiceAmountDue } from '../../billing/lineRemoval';
import { linkUsable, effectiveLinkStatus } from '../../presenters/paymentClaimLink';
import type { Dependencies } from '../../dependencies';
import { linkSecretKey } from './paymentClaimLinks';
import { ClaimChallenge, claimChallengeHmacKey, createClaimChallenge } from './claimChallenges';
import { paymentOptions, payToWallet, pendingChainPayments, qrPaymentUri } from './paymentOptions';

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

export async function payToAddresses(link: PaymentClaimLinkDoc): Promise<CryptoAddressDoc[]> {
  return (await payToWallet(link, { accountFallback: true })).addresses;
}

/**
 * The invoices a link pays: the customer's open ones, and those paid since the link was made
 * (so the page can show them paid). Oldest due date first. Read by status and by the months
 * paid since the link (docs/storage.md), never the customer's whole history.
 */
async function coveredInvoices(link: PaymentClaimLinkDoc): Promise<InvoiceDoc[]> {
  const scope = scopeOfDoc(link);
  const [open, paid] = await Promise.all([findOpenInvoices({ customer_id: link.customer_id }), findInvoicesPaidSince(link.customer_id, new Date(link.created_at), new Date())]);
  // One entry per invoice: one paid between the two reads is in both, and its paid state is the later.
  return [...new Map([...open, ...paid].map((i) => [i._id, i])).values()]
    .filter((i) => inScope(i, scope))
    .sort((a, b) => a.due_date.localeCompare(b.due_date) || new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || a._id.localeCompare(b._id));
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
  const wallet = await payToWallet(link, { accountFallback: true });
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
  const { quotes, pay_to } = await paymentOptions(deps, wallet, amountDue, sandbox, `/pay/${encodeURIComponent(secret)}`);
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
    pay_to,
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

/**
 * The payment URI a pay page QR code shows: `address` must be one of the usable link's
 * addresses; `amount` (the estimate the page shows) a valid amount of its currency, or absent.
 */
export async function payPageQrUri(secret: string, address: string, amount: string | null): Promise<string> {
  const link = await linkBySecret(secret);
  if (!linkUsable(link)) throw ApiError.notFound('Payment claim link not usable', 'secret');
  return qrPaymentUri(await payToAddresses(link), address, amount, 'Not an address of this payment link');
}
