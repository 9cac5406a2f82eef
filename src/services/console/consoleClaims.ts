/**
 * The console's payment claims queue: the scope's pending claims, oldest first, each with what
 * this service already stored about its payment (no node is asked): the chain payments the
 * watcher saw to the claim's address, marked when their hash is the claim's; the transactions
 * recorded with that hash (any address of the scope); and the scope's other claims naming it.
 */
import { PaymentClaim, PaymentClaimDoc } from '../../models/paymentClaim';
import { ChainPaymentDoc, ChainPaymentRecord } from '../../models/chainPayment';
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { Scope, scopeFilter } from '../../models/scope';
import { canonicalTransactionHash } from '../../cryptocurrency/transactionHashes';

/** At most this many claims in the queue, and chain payments per claim. */
export const CLAIM_QUEUE_LIMIT = 200;
const CHAIN_PAYMENTS_PER_CLAIM = 10;

export interface ClaimEvidence {
  claim: PaymentClaimDoc;
  /** The hash in its canonical spelling, or null when the claim holds no valid hash. */
  canonicalHash: string | null;
  chainPayments: (Pick<ChainPaymentDoc, '_id' | 'tx_hash' | 'amount' | 'status' | 'block_height' | 'timestamp'> & { sameHash: boolean })[];
  transactions: Pick<CryptoTransactionDoc, '_id' | 'transaction_id' | 'transaction_source' | 'amount' | 'to_address' | 'timestamp'>[];
  otherClaims: Pick<PaymentClaimDoc, '_id' | 'status' | 'amount' | 'to_address' | 'created_at'>[];
}

export async function pendingClaimsWithEvidence(scope: Scope): Promise<ClaimEvidence[]> {
  const claims = await PaymentClaim.find({ ...scopeFilter(scope), status: 'pending' }).sort({ created_at: 1, _id: 1 }).limit(CLAIM_QUEUE_LIMIT).lean<PaymentClaimDoc[]>();
  return Promise.all(
    claims.map(async (claim): Promise<ClaimEvidence> => {
      const checked = canonicalTransactionHash(claim.currency, claim.transaction_id);
      const canonicalHash = checked.ok ? checked.canonical : null;
      const hashes = [...new Set([claim.transaction_id, ...(canonicalHash ? [canonicalHash] : [])])];
      const address = await CryptoAddress.findOne({ ...scopeFilter(scope), _id: claim.to_address_id }).lean<CryptoAddressDoc>();
      const [chain, transactions, otherClaims] = await Promise.all([
        address
          ? ChainPaymentRecord.find({ currency: claim.currency, address_key: address.address_key }).sort({ timestamp: -1 }).limit(CHAIN_PAYMENTS_PER_CLAIM).lean<ChainPaymentDoc[]>()
          : Promise.resolve([] as ChainPaymentDoc[]),
        CryptoTransaction.find({ ...scopeFilter(scope), currency: claim.currency, transaction_id: { $in: hashes } }).sort({ timestamp: 1, _id: 1 }).lean<CryptoTransactionDoc[]>(),
        PaymentClaim.find({ ...scopeFilter(scope), _id: { $ne: claim._id }, currency: claim.currency, transaction_id: { $in: hashes } }).sort({ created_at: 1, _id: 1 }).lean<PaymentClaimDoc[]>(),
      ]);
      return {
        claim,
        canonicalHash,
        chainPayments: chain.map((p) => ({ _id: p._id, tx_hash: p.tx_hash, amount: p.amount, status: p.status, block_height: p.block_height, timestamp: p.timestamp, sameHash: hashes.includes(p.tx_hash) })),
        transactions: transactions.map((t) => ({ _id: t._id, transaction_id: t.transaction_id, transaction_source: t.transaction_source, amount: t.amount, to_address: t.to_address, timestamp: t.timestamp })),
        otherClaims: otherClaims.map((c) => ({ _id: c._id, status: c.status, amount: c.amount, to_address: c.to_address, created_at: c.created_at })),
      };
    }),
  );
}
