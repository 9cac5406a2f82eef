/** A customer's payment claim through a link: one use of the link, a pending claim for the merchant to review. */
import { PaymentClaimLink, PaymentClaimLinkDoc, PaymentClaimLinkUse } from '../../models/paymentClaimLink';
import { isDuplicateKey } from '../../models/errors';
import { PaymentClaim, PaymentClaimDoc } from '../../models/paymentClaim';
import { scopeFilter, scopeOfDoc } from '../../models/scope';
import { newId, ID_PREFIX } from '../../lib/ids';
import { ApiError } from '../../lib/errors';
import { cryptoAmountError } from '../../cryptocurrency/amounts';
import { isSupportedCurrency, validateAddress } from '../../cryptocurrency/addresses';
import { linkUsable, effectiveLinkStatus } from '../../presenters/paymentClaimLink';
import { presentPaymentClaim } from '../../presenters/paymentClaim';
import { recordEvent } from '../writes/events';
import type { Dependencies } from '../../dependencies';
import { linkBySecret, payToAddresses } from './publicPaymentClaimLinks';
import { claimChallengeHmacKey, verifyClaimSolution } from './claimChallenges';
import { writeHeld } from '../writes/heldWrites';
import { requireTransactionHash } from './cryptoTransactions';

export interface PublicClaimInput {
  transaction_id: string;
  amount: string;
  currency: string;
  to_address: string;
  verification?: string;
}

/** Every submission of a link at once may wait for the hold: more tries than a single API write. */
const LINK_HOLD_TRIES = 12;

/**
 * The link after use `used` (1-based), from the link as read under its hold: the count only
 * grows and the latest use names the claim, in whatever order the submissions' writes land
 * (one at a time: FerretDB v1 writes an update back as the whole document it read, so two
 * plain writes at once could put back an older count). An expired link stays expired.
 */
function linkAfterUse(doc: PaymentClaimLinkDoc, used: number, at: Date | null, claimId: string | null): Record<string, unknown> | null {
  const count = Math.max(doc.use_count ?? 0, used);
  const latest = used >= (doc.use_count ?? 0) && at !== null;
  const status = doc.status === 'expired' ? 'expired' : count >= doc.max_uses ? 'used' : 'active';
  if (!latest && count === doc.use_count && status === doc.status) return null;
  return { use_count: count, status, ...(latest ? { used_at: at, crypto_payment_claim_id: claimId } : {}) };
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
  const transactionId = requireTransactionHash(currency, input.transaction_id);
  const checked = validateAddress(currency, input.to_address, link.sandbox ? 'test' : 'mainnet');
  const target = checked.ok ? (await payToAddresses(link)).find((a) => a.currency === currency && a.address_key === checked.canonical) : undefined;
  if (!target) throw ApiError.invalid('The receiving address is not one of the addresses of this payment link', 'to_address');
  // Last, so a form error does not spend the solved challenge.
  if (deps.config.claimVerification && !(await verifyClaimSolution(input.verification, link._id, await claimChallengeHmacKey(deps.config.claimChallengeHmacKey)))) {
    throw new ApiError(422, 'invalid_request_error', 'verification_failed', 'Human verification failed; solve a new challenge and retry', 'verification');
  }

  // One use: taking use n is an insert on `<link>#<n>` (atomic), so concurrent submissions cannot
  // exceed max_uses. The uses taken are the truth, not `use_count`: FerretDB v1 writes an update
  // back as the whole document it read, so one submission's write can put back an older count; a
  // use found taken is stepped over. The claim id goes in the same write as the count (one write
  // of the link per submission, nothing to race a later count).
  const claimId = newId(ID_PREFIX.paymentClaim);
  let n = link.use_count ?? 0;
  for (let attempt = 0; ; attempt++) {
    if (n >= link.max_uses || attempt > link.max_uses + 20) {
      // Every use is taken (whatever the stored count says): shown as used from now on.
      if (link.status === 'active' && n >= link.max_uses) await writeHeld<PaymentClaimLinkDoc>(PaymentClaimLink, link._id, (doc) => linkAfterUse(doc, link.max_uses, null, null), { tries: LINK_HOLD_TRIES });
      throw unusable();
    }
    const now = new Date();
    try {
      await PaymentClaimLinkUse.create({ _id: `${link._id}#${n}`, link_id: link._id, created_at: now });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      n += 1;
      continue;
    }
    const held = await writeHeld<PaymentClaimLinkDoc>(PaymentClaimLink, link._id, (doc) => linkAfterUse(doc, n + 1, now, claimId), { tries: LINK_HOLD_TRIES, seen: link });
    if (held.result === 'missing') throw unusable();
    // Still held by others after every try: the use is taken all the same (its insert is the
    // truth); the next write, or the next submission's step over taken uses, catches the count up.
    if (held.result === 'busy') link = { ...link, ...linkAfterUse(link, n + 1, now, claimId) };
    else link = held.result === 'written' ? held.after : held.before;
    break;
  }
  const scope = scopeOfDoc(link);
  const claim = (
    await PaymentClaim.create({
      _id: claimId,
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
  const out = presentPaymentClaim(claim);
  await recordEvent(scope, 'payment_claim.submitted', out);
  if (link.status === 'used') await deps.workflows.claimLink.close(link._id);
  return out;
}
