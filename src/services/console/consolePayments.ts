/**
 * The console's payments: the scope's crypto transactions, newest first (read as
 * GET /v1/crypto_transactions reads them), and one payment's page: how it was split over invoices
 * and credit, and where it came from (on chain, entered by hand, or an approved claim).
 */
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { Invoice, InvoiceDoc } from '../../models/invoice';
import { PaymentClaim, PaymentClaimDoc } from '../../models/paymentClaim';
import { findIn } from '../../models/pushdown';
import { Scope, scopeFilter, findInScope, inScope } from '../../models/scope';
import { Pagination } from '../../lib/pagination';
import { explorerFor } from '../../cryptocurrency/addresses';
import { findCryptoTransaction } from '../crypto/cryptoTransactions';
import { listPage } from '../writes/listing';
import { customerLabels, CustomerLabel, paymentSource } from './consoleCustomers';

export interface PaymentRow {
  id: string;
  customer_id: string | null;
  customer: CustomerLabel | null;
  currency: string;
  amount: string;
  usd_value: string | null;
  unallocated_amount: string | null;
  source: string;
  timestamp: string;
  invoices: number;
}

export async function paymentTable(scope: Scope, page: number): Promise<{ rows: PaymentRow[]; pagination: Pagination }> {
  const { items, pagination } = await listPage<CryptoTransactionDoc>(CryptoTransaction, scopeFilter(scope), page, { timestamp: -1, _id: -1 });
  const labels = await customerLabels(scope, items.map((t) => t.customer_id));
  return {
    rows: items.map((t) => ({
      id: t._id,
      customer_id: t.customer_id ?? null,
      customer: t.customer_id ? labels.get(t.customer_id) ?? null : null,
      currency: t.currency,
      amount: t.amount,
      usd_value: t.usd_value ?? null,
      unallocated_amount: t.unallocated_amount ?? null,
      source: paymentSource(t),
      timestamp: new Date(t.timestamp).toISOString(),
      invoices: (t.allocations ?? []).length,
    })),
    pagination,
  };
}

export async function paymentPage(scope: Scope, id: string) {
  const t = await findCryptoTransaction(scope, id);
  const [labels, invoices, claim] = await Promise.all([
    customerLabels(scope, [t.customer_id]),
    findIn<InvoiceDoc>(Invoice, '_id', (t.allocations ?? []).map((a) => a.invoice_id)),
    t.payment_claim_id ? findInScope<PaymentClaimDoc>(PaymentClaim, scope, t.payment_claim_id) : Promise.resolve(null),
  ]);
  const inv = new Map(invoices.filter((i) => inScope(i, scope)).map((i) => [i._id, i]));
  return {
    id: t._id,
    customer_id: t.customer_id ?? null,
    customer: t.customer_id ? labels.get(t.customer_id) ?? null : null,
    currency: t.currency,
    amount: t.amount,
    hash: t.transaction_id,
    from_address: t.from_address ?? null,
    to_address: t.to_address,
    to_address_id: t.to_address_id,
    explorer: explorerFor(t.currency, t.to_address, scope.sandbox !== null),
    timestamp: new Date(t.timestamp).toISOString(),
    usd_value: t.usd_value ?? null,
    usd_price: t.usd_price ?? null,
    /** Null until its allocation finished. */
    unallocated_amount: t.unallocated_amount ?? null,
    allocated_at: t.allocated_at ? new Date(t.allocated_at).toISOString() : null,
    source: paymentSource(t),
    transaction_source: t.transaction_source,
    claim: claim ? { id: claim._id, status: claim.status, amount: claim.amount, approved_at: claim.approved_at ? new Date(claim.approved_at).toISOString() : null } : t.payment_claim_id ? { id: t.payment_claim_id, status: null, amount: null, approved_at: null } : null,
    allocations: (t.allocations ?? []).map((a) => ({
      id: a._id,
      invoice_id: a.invoice_id,
      invoice_status: inv.get(a.invoice_id)?.status ?? null,
      invoice_total: inv.get(a.invoice_id)?.total_amount ?? null,
      amount_applied: a.amount_applied,
      released_amount: a.released_amount ?? null,
      pays_in_full: a.pays_in_full ?? false,
      created_at: new Date(a.created_at).toISOString(),
    })),
  };
}
