/**
 * Transactions (and pending claims) stored before hashes had one spelling per currency: the
 * operator's report, and on request the rewrite of those that have no twin (`cli transactions
 * canonical-hashes [--apply]`). Duplicates are reported, never merged or deleted.
 */
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { PaymentClaim, PaymentClaimDoc } from '../../models/paymentClaim';
import { scopeKey, scopeOfDoc } from '../../models/scope';
import { validateAddress } from '../../cryptocurrency/addresses';
import { canonicalTransactionHash, planTransactionHashes, TransactionHashPlan } from '../../cryptocurrency/transactionHashes';
import { dedupeKey } from './cryptoTransactions';

export interface TransactionHashAudit extends TransactionHashPlan {
  /** Rewritten by this run (empty unless applied). */
  rewritten: string[];
  /** Left for a later run: the allocation of these is still in flight. */
  busy: string[];
  /** Pending claims whose hash was rewritten (or would be). */
  claims: { id: string; from: string; canonical: string }[];
}

export async function auditTransactionHashes(opts: { apply: boolean }): Promise<TransactionHashAudit> {
  const txs = await CryptoTransaction.find({}, { account_id: 1, sandbox: 1, currency: 1, transaction_id: 1, to_address: 1, allocation_due: 1 }).lean<CryptoTransactionDoc[]>();
  const addressKey = (t: CryptoTransactionDoc) => {
    const checked = validateAddress(t.currency, t.to_address, 'test');
    return checked.ok ? checked.canonical : t.to_address;
  };
  const plan = planTransactionHashes(txs.map((t) => ({ id: t._id, scope: scopeKey(scopeOfDoc(t)), currency: t.currency, transaction_id: t.transaction_id, address_key: addressKey(t) })));
  const byId = new Map(txs.map((t) => [t._id, t]));
  const audit: TransactionHashAudit = { ...plan, rewritten: [], busy: [], claims: [] };
  for (const r of plan.rewrite) {
    const t = byId.get(r.id)!;
    // An allocation in flight writes this document (FerretDB v1 writes whole documents back).
    if (t.allocation_due) {
      audit.busy.push(r.id);
      continue;
    }
    if (!opts.apply) continue;
    await CryptoTransaction.updateOne({ _id: r.id, transaction_id: r.from }, { $set: { transaction_id: r.canonical, dedupe_key: dedupeKey(scopeOfDoc(t), t.currency, r.canonical, addressKey(t)) } });
    audit.rewritten.push(r.id);
  }
  const claims = await PaymentClaim.find({ status: 'pending' }, { currency: 1, transaction_id: 1 }).lean<PaymentClaimDoc[]>();
  for (const c of claims) {
    const checked = canonicalTransactionHash(c.currency, c.transaction_id);
    if (!checked.ok || checked.canonical === c.transaction_id) continue;
    audit.claims.push({ id: c._id, from: c.transaction_id, canonical: checked.canonical });
    if (opts.apply) await PaymentClaim.updateOne({ _id: c._id, status: 'pending' }, { $set: { transaction_id: checked.canonical } });
  }
  return audit;
}
