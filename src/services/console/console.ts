/**
 * What the finance console shows, read-only: the overview figures and charts (from the same
 * report services as /v1/reports, so they agree), the subscriptions table, and one
 * subscription's lifecycle. One query per collection, filtered by account and scope.
 */
import { Subscription, SubscriptionDoc, CanceledSubscription, CanceledSubscriptionDoc, SUBSCRIPTION_STATUSES } from '../../models/subscription';
import { Customer } from '../../models/customer';
import { Invoice, InvoiceDoc } from '../../models/invoice';
import { AmountMismatch, AmountMismatchDoc, CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { Scope, scopeFilter, findInScope, inScope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { centsToAmount, toAmount, Money } from '../../billing/money';
import { subscriptionMrrCents, monthOf } from '../../billing/mrr';
import { AGING_LABELS } from '../../billing/receivables';
import { nextBillingDateOf } from '../../billing/subscriptionPlan';
import { collections, inForceAt, loadMrrSource, mrr, receivablesTotals, toMrrSubscription } from '../reports/reports';
import { timelineSteps } from '../billing/subscriptionTimeline';
import { customerName } from './consoleCustomers';

const MISMATCHES_SHOWN = 20;

export async function overview(scope: Scope, now = new Date()) {
  const thisMonth = monthOf(now);
  const source = await loadMrrSource(scope);
  const [m, aging, c, mismatches] = await Promise.all([
    mrr(scope, { to: thisMonth }, now, source),
    receivablesTotals(scope, now),
    collections(scope, { to: thisMonth }, now),
    AmountMismatch.find(scopeFilter(scope)).sort({ detected_at: -1 }).limit(MISMATCHES_SHOWN).lean<AmountMismatchDoc[]>(),
  ]);
  const current = m.months[m.months.length - 1];
  const collected = c.result.months[c.result.months.length - 1];
  const currencies = [...new Set(c.result.rows.map((row) => row.currency))].sort();
  return {
    month: thisMonth,
    mrr: centsToAmount(current.mrrCents),
    arr: centsToAmount(current.mrrCents * 12),
    // From the phases in force now, not the stored status, which the subscription workflow moves later.
    active_subscriptions: inForceAt(source, now),
    churned_this_month: current.churnedSubscriptions,
    open_total: aging.total,
    overdue_total: aging.overdue,
    collected_this_month: collected.usd_value,
    /** Transactions whose amount the chain contradicts, newest first: for the merchant to review. */
    amount_mismatches: mismatches.map((x) => ({
      crypto_transaction_id: x._id, currency: x.currency, transaction_id: x.transaction_id,
      recorded_amount: x.recorded_amount, chain_amount: x.chain_amount, detected_at: x.detected_at.toISOString(),
    })),
    charts: {
      mrr: {
        labels: m.months.map((x) => x.month),
        new: m.months.map((x) => x.newCents / 100),
        expansion: m.months.map((x) => x.expansionCents / 100),
        contraction: m.months.map((x) => x.contractionCents / 100),
        churned: m.months.map((x) => x.churnedCents / 100),
        mrr: m.months.map((x) => x.mrrCents / 100),
      },
      aging: { labels: aging.buckets.map((b) => AGING_LABELS[b.bucket]), amounts: aging.buckets.map((b) => Number(b.amount)) },
      collections: {
        labels: c.result.months.map((x) => x.month),
        currencies: currencies.map((cur) => ({
          currency: cur,
          usd: c.result.months.map((x) => c.result.rows.filter((row) => row.month === x.month && row.currency === cur).reduce((s, row) => s + Number(row.usd_value), 0)),
        })),
      },
    },
  };
}

export interface SubscriptionFilter {
  status?: string;
  /** A customer id, or part of the customer's email or name. */
  customer?: string;
  /** Next billing date within these days (YYYY-MM-DD, both included). */
  next_from?: string;
  next_to?: string;
  page: number;
}

export const CONSOLE_PAGE_SIZE = 50;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export async function subscriptionTable(scope: Scope, filter: SubscriptionFilter, now = new Date()) {
  if (filter.status && !(SUBSCRIPTION_STATUSES as readonly string[]).includes(filter.status)) throw ApiError.invalid('Unknown status', 'status');
  for (const p of ['next_from', 'next_to'] as const) if (filter[p] && !DATE.test(filter[p]!)) throw ApiError.invalid(`${p} must be a date (YYYY-MM-DD)`, p);
  const [subs, customers] = await Promise.all([
    Subscription.find(scopeFilter(scope), { customer_id: 1, status: 1, proration_behavior: 1, billing_cycle_anchor: 1, canceled_at: 1, phases: 1, created_at: 1 }).lean<SubscriptionDoc[]>(),
    Customer.find(scopeFilter(scope), { email: 1, first_name: 1, last_name: 1 }).lean<{ _id: string; email: string; first_name?: string | null; last_name?: string | null }[]>(),
  ]);
  const email = new Map(customers.map((c) => [c._id, c.email]));
  const name = new Map(customers.map((c) => [c._id, customerName(c)]));
  const needle = filter.customer?.trim().toLowerCase();
  const nextOf = new Map(subs.map((s) => [s._id, nextBillingDateOf(s, now)]));
  const rows = subs
    .filter((s) => !filter.status || s.status === filter.status)
    .filter((s) => !needle || s.customer_id.toLowerCase() === needle || (email.get(s.customer_id) ?? '').includes(needle) || (name.get(s.customer_id) ?? '').toLowerCase().includes(needle))
    .filter((s) => {
      const next = nextOf.get(s._id)?.toISOString().slice(0, 10) ?? null;
      if (filter.next_from && (!next || next < filter.next_from)) return false;
      if (filter.next_to && (!next || next > filter.next_to)) return false;
      return true;
    })
    .sort((a, b) => new Date(b.created_at).getTime() - new Date(a.created_at).getTime() || (a._id < b._id ? 1 : -1));
  const pages = Math.ceil(rows.length / CONSOLE_PAGE_SIZE);
  const page = rows.slice((filter.page - 1) * CONSOLE_PAGE_SIZE, filter.page * CONSOLE_PAGE_SIZE).map((s) => ({
    id: s._id,
    customer_id: s.customer_id,
    customer_email: email.get(s.customer_id) ?? null,
    customer_name: name.get(s.customer_id) ?? null,
    status: s.status,
    next_billing_date: nextOf.get(s._id)?.toISOString() ?? null,
    start_date: s.phases[0] ? new Date(s.phases[0].start_date).toISOString() : null,
    mrr: centsToAmount(subscriptionMrrCents(toMrrSubscription(s), now)),
  }));
  return { rows: page, count: rows.length, page: filter.page, pages };
}

/**
 * One subscription's lifecycle for the time axis: its phases, the invoices it generated (with
 * their status, billing periods and proration credits), the payments applied to them, the
 * stored lifecycle events and the next billing date. A subscription deleted (canceled) since is
 * read from its kept copy.
 */
export async function subscriptionLifecycle(scope: Scope, id: string) {
  const live = await findInScope<SubscriptionDoc>(Subscription, scope, id);
  const kept = live ? null : await findInScope<CanceledSubscriptionDoc>(CanceledSubscription, scope, id);
  const sub = live ?? kept;
  if (!sub) throw ApiError.notFound(`No such subscription: ${id}`, 'id');
  const [invoices, transactions, steps] = await Promise.all([
    // By subscription id (pushed down), then the scope checked in code.
    Invoice.find({ subscription_id: id }).lean<InvoiceDoc[]>(),
    CryptoTransaction.find({ ...scopeFilter(scope), customer_id: sub.customer_id }, { allocations: 1, currency: 1, amount: 1, transaction_source: 1, timestamp: 1, transaction_id: 1 }).lean<CryptoTransactionDoc[]>(),
    timelineSteps(scope, id),
  ]);
  const own = invoices.filter((i) => inScope(i, scope)).sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime());
  const ids = new Set(own.map((i) => i._id));
  const payments = transactions.flatMap((t) =>
    (t.allocations ?? [])
      .filter((a) => ids.has(a.invoice_id))
      .map((a) => ({ at: new Date(a.created_at).toISOString(), invoice_id: a.invoice_id, amount_applied: a.amount_applied, currency: t.currency, amount: t.amount, source: t.transaction_source, transaction: t._id })),
  );
  const credits = own.flatMap((i) =>
    i.line_items.filter((l) => new Money(l.amount).isNegative()).map((l) => ({ at: new Date(i.created_at).toISOString(), invoice_id: i._id, amount: l.amount, description: l.description ?? 'Credit' })),
  );
  return {
    id,
    customer_id: sub.customer_id,
    status: live ? live.status : 'canceled',
    canceled_at: sub.canceled_at ? new Date(sub.canceled_at).toISOString() : null,
    next_billing_date: live ? (nextBillingDateOf(live, new Date())?.toISOString() ?? null) : null,
    phases: sub.phases.map((p) => ({
      id: p._id,
      start_date: new Date(p.start_date).toISOString(),
      end_date: p.end_date ? new Date(p.end_date).toISOString() : null,
      items: p.items.map((i) => ({ product_name: i.product_name, quantity: i.quantity, price: i.overridden_price_amount ?? i.unit_amount, interval: i.interval, interval_count: i.interval_count })),
    })),
    invoices: own.map((i) => ({
      id: i._id,
      status: i.status,
      created_at: new Date(i.created_at).toISOString(),
      due_date: i.due_date,
      period_start: i.period_start ? new Date(i.period_start).toISOString() : null,
      period_end: i.period_end ? new Date(i.period_end).toISOString() : null,
      total_amount: i.total_amount,
      amount_paid: toAmount(i.amount_paid ?? '0'),
    })),
    payments,
    credits,
    steps,
  };
}
