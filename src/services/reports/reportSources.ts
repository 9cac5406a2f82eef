/**
 * The source documents of the MRR and collections reports, read once per collection, filtered
 * by account and scope (pushed down by FerretDB) with a projection. Read by the live reports and
 * by the rollup rebuilds (src/services/reports/reportRollups.ts).
 */
import { Subscription, CanceledSubscription } from '../../models/subscription';
import { findOpenInvoices, Invoice } from '../../models/invoice';
import { CryptoTransaction } from '../../models/cryptoTransaction';
import { Scope, scopeFilter } from '../../models/scope';
import type { MrrSubscription } from '../../billing/mrr';
import type { CollectedTransaction, MarkedPaidInvoice } from '../../billing/collections';
import type { OpenInvoice } from '../../billing/receivables';

const PHASES_PROJECTION = { customer_id: 1, canceled_at: 1, phases: 1 } as const;

/** Every subscription of the scope that can have had MRR: live ones and those canceled (deleted) since. */
export async function loadMrrSubscriptions(scope: Scope): Promise<MrrSubscription[]> {
  const [live, canceled] = await Promise.all([
    Subscription.find(scopeFilter(scope), PHASES_PROJECTION).lean<RawSubscription[]>(),
    CanceledSubscription.find(scopeFilter(scope), PHASES_PROJECTION).lean<RawSubscription[]>(),
  ]);
  const seen = new Set<string>();
  const out: MrrSubscription[] = [];
  // A subscription caught between its archive copy and its delete is in both: counted once.
  for (const s of [...live, ...canceled]) {
    if (seen.has(s._id)) continue;
    seen.add(s._id);
    out.push(toMrrSubscription(s));
  }
  return out;
}

/** A stored subscription (live or kept after cancellation) as the MRR maths reads it. */
export function toMrrSubscription(s: RawSubscription): MrrSubscription {
  return {
    id: s._id,
    customer_id: s.customer_id,
    canceled_at: s.canceled_at ? new Date(s.canceled_at) : null,
    phases: (s.phases ?? []).map((p) => ({
      start_date: new Date(p.start_date),
      end_date: p.end_date ? new Date(p.end_date) : null,
      items: p.items ?? [],
    })),
  };
}

export interface RawSubscription {
  _id: string;
  customer_id: string;
  canceled_at?: Date | null;
  phases?: { start_date: Date; end_date?: Date | null; items?: MrrSubscription['phases'][number]['items'] }[];
}

const TRANSACTION_PROJECTION = {
  customer_id: 1, currency: 1, amount: 1, transaction_source: 1, timestamp: 1, usd_value: 1, unallocated_amount: 1, allocations: 1,
} as const;

/** Every crypto transaction of the scope, and the invoices marked paid with nothing applied. */
export async function loadCollectionsSource(scope: Scope): Promise<{ transactions: CollectedTransaction[]; markedPaid: MarkedPaidInvoice[] }> {
  const [transactions, paid] = await Promise.all([
    CryptoTransaction.find(scopeFilter(scope), TRANSACTION_PROJECTION).lean<CollectedTransaction[]>(),
    // Only invoices paid with nothing applied count (see collectionsReport): an equality FerretDB
    // pushes down, so the many invoices paid by crypto are never read.
    Invoice.find({ ...scopeFilter(scope), status: 'paid', amount_paid: '0.00' }, { total_amount: 1, amount_paid: 1, paid_at: 1, updated_at: 1 }).lean<{ total_amount: string; amount_paid?: string; paid_at?: Date | null; updated_at: Date }[]>(),
  ]);
  // When it was marked paid; an invoice paid before `paid_at` was written: its last update, as a
  // paid invoice is seldom written again (a due date moved after would move it).
  const markedPaid: MarkedPaidInvoice[] = paid.map((i) => ({ paid_at: new Date(i.paid_at ?? i.updated_at), total_amount: i.total_amount, amount_paid: i.amount_paid ?? '0.00' }));
  const normalized = transactions.map((t) => ({ ...t, customer_id: t.customer_id ?? null, timestamp: new Date(t.timestamp), allocations: t.allocations ?? [] }));
  return { transactions: normalized, markedPaid };
}

const INVOICE_PROJECTION = { customer_id: 1, status: 1, due_date: 1, total_amount: 1, amount_paid: 1, created_at: 1 } as const;

/** Every open invoice (pending, overdue) of the scope. */
export async function loadOpenInvoices(scope: Scope): Promise<(OpenInvoice & { created_at: Date })[]> {
  const open = await findOpenInvoices<OpenInvoice & { _id: string; created_at: Date }>(scopeFilter(scope), INVOICE_PROJECTION);
  return open.map((i) => ({
    id: i._id, customer_id: i.customer_id, status: i.status, due_date: i.due_date, total_amount: i.total_amount, amount_paid: i.amount_paid ?? '0.00', created_at: new Date(i.created_at),
  }));
}
