/**
 * How a customer can pay, as the customer-facing pages show it (a claim link's pay page, an
 * invoice's hosted page): the addresses to pay to, an estimate of the amount in each currency at
 * the spot price, the payment URI and its QR code, and payments seen on chain but not recorded yet.
 */
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { Wallet, WalletDoc } from '../../models/wallet';
import { ChainCursor, ChainCursorDoc, ChainPaymentDoc, ChainPaymentRecord } from '../../models/chainPayment';
import { scopeOfDoc, inScope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { cryptoAmountError, formatCryptoAmount, Dec } from '../../cryptocurrency/amounts';
import { explorerFor, CryptoCurrency } from '../../cryptocurrency/addresses';
import { paymentUri } from '../../cryptocurrency/paymentUri';
import type { PendingChainPayment } from '../../cryptocurrency/paymentStatus';
import type { Dependencies } from '../../dependencies';

/** Whose payment it is: a customer of an account, in a scope. */
export interface Payer {
  customer_id: string;
  account_id: string;
  sandbox?: string | null;
}

/** The addresses a customer pays to, and whose they are (`null`: none set up). */
export interface PayToWallet {
  owner: 'customer' | 'account' | null;
  addresses: CryptoAddressDoc[];
}

/**
 * Where the customer can pay: the customer's wallet addresses, else (`accountFallback`) the
 * account wallet's; `owner` says whose, since only payments to the customer's own addresses are
 * theirs for sure.
 */
export async function payToWallet(payer: Payer, opts: { accountFallback: boolean }): Promise<PayToWallet> {
  const scope = scopeOfDoc(payer);
  const owners = opts.accountFallback ? [payer.customer_id, payer.account_id] : [payer.customer_id];
  const wallets = (await Wallet.find({ owner_id: { $in: owners } }).lean<WalletDoc[]>()).filter((w) => inScope(w, scope));
  const customerWallet = wallets.find((w) => w.owner_type === 'customer' && w.owner_id === payer.customer_id);
  const accountWallet = wallets.find((w) => w.owner_type === 'account');
  for (const [owner, w] of [['customer', customerWallet], ['account', accountWallet]] as const) {
    if (!w) continue;
    const addresses = await CryptoAddress.find({ wallet_id: w._id }).sort({ created_at: 1, _id: 1 }).lean<CryptoAddressDoc[]>();
    if (addresses.length > 0) return { owner, addresses };
  }
  return { owner: null, addresses: [] };
}

/**
 * Payments seen on chain to the customer's own addresses and not recorded yet, with the
 * watcher's last scanned height. An account-wallet address is shared by every customer, so
 * what arrives there is not shown (it may be someone else's payment).
 */
export async function pendingChainPayments(deps: Dependencies, wallet: PayToWallet): Promise<PendingChainPayment[]> {
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

/**
 * Per address: the estimate of `amountDue` (USD) in its currency at the spot price, its payment
 * URI and the path of its QR code (`<qrBase>/qr.svg?address=…&amount=…`, served by the page).
 */
export async function paymentOptions(deps: Dependencies, wallet: PayToWallet, amountDue: string, sandbox: boolean, qrBase: string) {
  const quotes: { currency: CryptoCurrency; usd_price: string; amount: string }[] = [];
  for (const currency of new Set(wallet.addresses.map((a) => a.currency))) {
    // The refresher's last price, not a lookup per visitor. No quote without a price; the page still shows the addresses.
    const usd = await deps.spotPrices.usdPrice(currency);
    if (usd === null) continue;
    const amount = new Dec(amountDue).div(usd).toDecimalPlaces(currency === 'BTC' ? 8 : 18, Dec.ROUND_UP);
    quotes.push({ currency, usd_price: usd, amount: formatCryptoAmount(currency, amount) });
  }
  const pay_to = wallet.addresses.map((a) => {
    // The estimate fills the URI; with nothing due (or no price) the wallet asks for the amount.
    const quoted = quotes.find((q) => q.currency === a.currency)?.amount;
    const amount = quoted && new Dec(quoted).gt(0) ? quoted : null;
    return {
      currency: a.currency,
      address: a.address,
      explorer: explorerFor(a.currency, a.address, sandbox),
      amount,
      payment_uri: paymentUri(a.currency, a.address, amount),
      qr_code_url: qrCodePath(qrBase, a.address, amount),
    };
  });
  return { quotes, pay_to };
}

/** Where the page finds the QR code of an address (relative: the page is served by this API). */
function qrCodePath(base: string, address: string, amount: string | null): string {
  const q = new URLSearchParams({ address, ...(amount ? { amount } : {}) });
  return `${base}/qr.svg?${q}`;
}

/**
 * The payment URI a page's QR code shows: `address` must be one of `addresses`; `amount` (the
 * estimate the page shows) a valid amount of its currency, or absent.
 */
export function qrPaymentUri(addresses: readonly CryptoAddressDoc[], address: string, amount: string | null, notFound: string): string {
  const target = addresses.find((a) => a.address === address);
  if (!target) throw ApiError.notFound(notFound, 'address');
  if (amount !== null) {
    const err = cryptoAmountError(target.currency, amount);
    if (err) throw ApiError.invalid(`Amount is invalid: ${err}`, 'amount');
  }
  return paymentUri(target.currency, target.address, amount);
}
