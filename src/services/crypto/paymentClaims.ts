/**
 * Payment claims: submitted by customers through a link (paymentClaimLinks.ts), approved or
 * rejected by the merchant. Approval records a `manual_entry` transaction and allocates it.
 */
import { PaymentClaim, PaymentClaimDecision, PaymentClaimDoc, ClaimStatus } from '../../models/paymentClaim';
import { isDuplicateKey } from '../../models/errors';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { presentPaymentClaim } from '../../presenters/paymentClaim';
import { recordEvent } from '../writes/events';
import { listPage } from '../writes/listing';
import { alreadyRecorded, findRecordedPayment, recordCryptoTransaction, requireTransactionHash } from './cryptoTransactions';
import { findCryptoAddress } from './cryptoAddresses';
import type { Dependencies } from '../../dependencies';
import { CryptoTransaction } from '../../models/cryptoTransaction';
import { derivedId, ID_PREFIX } from '../../lib/ids';

async function findClaim(scope: Scope, id: string): Promise<PaymentClaimDoc> {
  const claim = await findInScope<PaymentClaimDoc>(PaymentClaim, scope, id);
  if (!claim) throw ApiError.notFound('Payment claim not found', 'id');
  return claim;
}

const notPending = () => ApiError.invalid('Payment claim is not pending', 'status', { status: ['is not pending'] });

/**
 * The atomic pending -> decided step: an insert keyed by the claim id (see PaymentClaimDecision).
 * The same decision found already taken belongs to an attempt that may have stopped half-way
 * (a crash between writes): the caller finishes it, every later step being idempotent.
 */
async function takeDecision(claimId: string, decision: 'approved' | 'rejected'): Promise<void> {
  try {
    await PaymentClaimDecision.create({ _id: claimId, decision, created_at: new Date() });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const taken = await PaymentClaimDecision.findById(claimId).lean<{ decision: string }>();
    if (taken?.decision !== decision) throw notPending();
  }
}

/** The transaction an approval records: derived from the claim, so it cannot be recorded twice. */
export const claimTransactionId = (claimId: string) => derivedId(ID_PREFIX.cryptoTransaction, `payment_claim:${claimId}`);

export async function getPaymentClaim(scope: Scope, id: string) {
  return presentPaymentClaim(await findClaim(scope, id));
}

export async function listPaymentClaims(scope: Scope, page: number, filter: { status?: ClaimStatus } = {}) {
  const { items, pagination } = await listPage<PaymentClaimDoc>(PaymentClaim, { ...scopeFilter(scope), ...filter }, page);
  return { crypto_payment_claims: items.map(presentPaymentClaim), pagination };
}

/**
 * pending -> approved (one decision wins), then the transaction (`manual_entry`, allocated like
 * any other). If the transaction cannot be recorded (say the same hash was already recorded
 * for that address) the claim goes back to pending. An approval that stopped after its
 * decision (approved, no transaction) is finished by the next approval.
 */
export async function approvePaymentClaim(deps: Dependencies, scope: Scope, userId: number, id: string) {
  const claim = await findClaim(scope, id);
  if (claim.status === 'rejected' || claim.crypto_transaction_id) throw notPending();
  const txId = claimTransactionId(claim._id);
  // A payment already recorded (on chain or by hand, in any spelling of its hash) is refused
  // before the decision, so the claim stays pending for the merchant to reject with a reason.
  // (Claims stored before hashes were checked may still hold one that is not a hash: the same.)
  const hash = requireTransactionHash(claim.currency, claim.transaction_id);
  const recorded = await findRecordedPayment(scope, claim.currency, hash, await findCryptoAddress(scope, claim.to_address_id, 'to_address_id'));
  if (recorded && recorded._id !== txId) throw alreadyRecorded(recorded);
  await takeDecision(claim._id, 'approved');
  const approvedAt = claim.approved_at ?? new Date();
  const approvedBy = claim.approved_by_id ?? userId;
  const taken = await PaymentClaim.findOneAndUpdate(
    { _id: claim._id },
    { $set: { status: 'approved', approved_at: approvedAt, approved_by_id: approvedBy } },
    { returnDocument: 'after' },
  ).lean<PaymentClaimDoc>();
  if (!taken) throw notPending();
  try {
    await recordCryptoTransaction(
      deps,
      scope,
      { to_address_id: claim.to_address_id, amount: claim.amount, currency_code: claim.currency, transaction_id: claim.transaction_id, timestamp: new Date(claim.created_at).toISOString() },
      { source: 'manual_entry', paymentClaimId: claim._id, id: txId },
    );
  } catch (err) {
    // Once the transaction exists the approval stands (a retry finishes it); before, it is undone.
    if (!(await CryptoTransaction.exists({ _id: txId }))) {
      await PaymentClaim.updateOne({ _id: claim._id }, { $set: { status: 'pending', approved_at: null, approved_by_id: null } });
      await PaymentClaimDecision.deleteOne({ _id: claim._id });
    }
    throw err;
  }
  const approved = await PaymentClaim.findOneAndUpdate({ _id: claim._id }, { $set: { crypto_transaction_id: txId } }, { returnDocument: 'after' }).lean<PaymentClaimDoc>();
  const out = presentPaymentClaim(approved!);
  await recordEvent(scope, 'payment_claim.approved', out, { idempotencyKey: `payment_claim.approved:${claim._id}` });
  return out;
}

export async function rejectPaymentClaim(scope: Scope, userId: number, id: string, reason?: string) {
  const claim = await findClaim(scope, id);
  if (claim.status !== 'pending') throw notPending();
  const text = reason !== undefined && reason.trim() !== '' ? reason.trim() : 'No reason provided';
  await takeDecision(claim._id, 'rejected');
  const rejected = await PaymentClaim.findOneAndUpdate(
    { _id: claim._id },
    { $set: { status: 'rejected', rejection_reason: text, approved_at: new Date(), approved_by_id: userId } },
    { returnDocument: 'after' },
  ).lean<PaymentClaimDoc>();
  if (!rejected) throw notPending();
  const out = presentPaymentClaim(rejected);
  await recordEvent(scope, 'payment_claim.rejected', out, { idempotencyKey: `payment_claim.rejected:${claim._id}` });
  return out;
}
