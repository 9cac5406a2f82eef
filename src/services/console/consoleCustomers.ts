/**
 * The console's customers: the list with its search by name or email, one customer's page, and
 * the names every console table shows beside a customer id.
 *
 * Search (src/lib/searchTerms.ts): one equality `{ list_scope, search_terms }` that FerretDB hands
 * to PostgreSQL and its GIN index, so a search costs its matches, not the account's customers; the
 * matches are then checked against the query in code (every word starts a word of the names or
 * the email) and paged newest first. Customers written before the terms existed get theirs the
 * first time their scope is searched (a marker per scope says it is done).
 */
import { Customer, CustomerDoc } from '../../models/customer';
import { Wallet, WalletDoc } from '../../models/wallet';
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { findOpenInvoices, InvoiceDoc } from '../../models/invoice';
import { Subscription, SubscriptionDoc } from '../../models/subscription';
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { ListCounter } from '../../models/listCounter';
import { findIn } from '../../models/pushdown';
import { Scope, inScope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { pageWindow, pagination, Pagination } from '../../lib/pagination';
import { customerSearchTerms, parseCustomerQuery } from '../../lib/searchTerms';
import { compareAmounts, subtractAmounts, sumAmounts } from '../../billing/money';
import { explorerFor } from '../../cryptocurrency/addresses';
import { isDuplicateKey } from '../../models/errors';
import { findCustomer } from '../billing/customers';
import { nextBillingDateOf } from '../../billing/subscriptionPlan';
import { listScopeOf, listScopePage } from '../writes/listing';

/** A customer as the console names it: name and email, the id kept for copying. */
export interface CustomerLabel {
  id: string;
  name: string | null;
  email: string | null;
}

export const customerName = (c: { first_name?: string | null; last_name?: string | null }): string | null =>
  [c.first_name, c.last_name].filter((x) => x && x.trim()).join(' ') || null;

const labelOf = (c: Pick<CustomerDoc, '_id' | 'email' | 'first_name' | 'last_name'>): CustomerLabel => ({ id: c._id, name: customerName(c), email: c.email });

/** Above this many distinct ids a page's names come from one read of the scope's customers, not one lookup by id each. */
const BY_ID_LIMIT = 1000;

/**
 * The names of a page's customers, in one batch: each distinct id by `_id` (FerretDB's fast path,
 * run together; `$in` would make it decode the whole collection), or the scope's customers at
 * once when the page names many. A deleted customer has no label (the id is shown alone).
 */
export async function customerLabels(scope: Scope, ids: readonly (string | null | undefined)[]): Promise<Map<string, CustomerLabel>> {
  const distinct = [...new Set(ids.filter((x): x is string => typeof x === 'string' && x !== ''))];
  if (!distinct.length) return new Map();
  const found =
    distinct.length <= BY_ID_LIMIT
      ? await findIn<CustomerDoc>(Customer, '_id', distinct)
      : await Customer.find({ list_scope: listScopeOf(scope) }, { email: 1, first_name: 1, last_name: 1, account_id: 1, sandbox: 1 }).lean<CustomerDoc[]>();
  const wanted = new Set(distinct);
  return new Map(found.filter((c) => inScope(c, scope) && wanted.has(c._id)).map((c) => [c._id, labelOf(c)]));
}

const termsMarker = (scope: Scope) => `search_terms|customers|${listScopeOf(scope)}`;

/** Gives the scope's customers written before search terms existed their terms, once (then one read by `_id`). */
export async function ensureSearchTerms(scope: Scope): Promise<number> {
  if (await ListCounter.exists({ _id: termsMarker(scope) })) return 0;
  const docs = await Customer.find({ list_scope: listScopeOf(scope) }, { email: 1, first_name: 1, last_name: 1, search_terms: 1 }).lean<CustomerDoc[]>();
  const missing = docs.filter((c) => !Array.isArray(c.search_terms));
  for (let i = 0; i < missing.length; i += 500) {
    const ops = missing.slice(i, i + 500).map((c) => ({ updateOne: { filter: { _id: c._id }, update: { $set: { search_terms: customerSearchTerms(c) } } } }));
    await Customer.bulkWrite(ops, { ordered: false });
  }
  await ListCounter.create({ _id: termsMarker(scope), count: missing.length }).catch((err) => {
    if (!isDuplicateKey(err)) throw err;
  });
  return missing.length;
}

export interface CustomerRow {
  id: string;
  name: string | null;
  email: string;
  created_at: string;
}

const newestFirst = (a: { created_at: Date; _id: string }, b: { created_at: Date; _id: string }) =>
  new Date(b.created_at).getTime() - new Date(a.created_at).getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/**
 * A page of the scope's customers, newest first: the plain list (its buckets only, as
 * GET /v1/customers), or those a query finds. A query of no two-letter word is refused (422).
 */
export async function customerTable(scope: Scope, filter: { q?: string; page: number }): Promise<{ rows: CustomerRow[]; pagination: Pagination; query: string }> {
  const q = (filter.q ?? '').trim().slice(0, 200);
  const row = (c: CustomerDoc): CustomerRow => ({ id: c._id, name: customerName(c), email: c.email, created_at: new Date(c.created_at).toISOString() });
  if (!q) {
    const { items, pagination: p } = await listScopePage<CustomerDoc>(Customer, scope, filter.page);
    return { rows: items.map(row), pagination: p, query: '' };
  }
  const parsed = parseCustomerQuery(q);
  if (!parsed) throw ApiError.invalid('Search with at least two letters or digits of a name or email', 'q');
  const { skip, limit } = pageWindow(filter.page);
  await ensureSearchTerms(scope);
  const found = await Customer.find({ list_scope: listScopeOf(scope), search_terms: parsed.term }).lean<CustomerDoc[]>();
  const matches = found.filter((c) => inScope(c, scope) && parsed.matches(c)).sort(newestFirst);
  return { rows: matches.slice(skip, skip + limit).map(row), pagination: pagination(filter.page, matches.length), query: q };
}

const byNewest = <T extends { timestamp?: Date; created_at: Date; _id: string }>(a: T, b: T) =>
  new Date(b.timestamp ?? b.created_at).getTime() - new Date(a.timestamp ?? a.created_at).getTime() || (a._id < b._id ? 1 : -1);

/** How much of an invoice is still due. */
export const balanceOf = (i: Pick<InvoiceDoc, 'total_amount' | 'amount_paid'>) => {
  const due = subtractAmounts(i.total_amount, i.amount_paid ?? '0.00');
  return compareAmounts(due, '0.00') < 0 ? '0.00' : due;
};

/**
 * One customer's page: open invoices (oldest due first) and their balance, the credit left on its
 * payments, its wallets and addresses (with explorer links), subscriptions and payments. Each read
 * is an equality on an indexed field (customer, wallet, address), the scope checked in code.
 */
export async function customerPage(scope: Scope, id: string) {
  const customer = await findCustomer(scope, id);
  const [wallets, open, subs] = await Promise.all([
    Wallet.find({ owner_id: customer._id }).lean<WalletDoc[]>(),
    findOpenInvoices({ customer_id: customer._id }),
    Subscription.find({ customer_id: customer._id }).lean<SubscriptionDoc[]>(),
  ]);
  const own = wallets.filter((w) => inScope(w, scope));
  const addresses = (await Promise.all(own.map((w) => CryptoAddress.find({ wallet_id: w._id }).lean<CryptoAddressDoc[]>()))).flat().filter((a) => inScope(a, scope));
  const payments = (await Promise.all(addresses.map((a) => CryptoTransaction.find({ to_address_id: a._id }).lean<CryptoTransactionDoc[]>())))
    .flat()
    .filter((t) => inScope(t, scope))
    .sort(byNewest);
  const openInvoices = open
    .filter((i) => inScope(i, scope))
    .sort((a, b) => a.due_date.localeCompare(b.due_date) || a._id.localeCompare(b._id));
  return {
    customer: { ...labelOf(customer), created_at: new Date(customer.created_at).toISOString() },
    open_invoices: openInvoices.map((i) => ({ id: i._id, status: i.status, due_date: i.due_date, total_amount: i.total_amount, amount_paid: i.amount_paid ?? '0.00', balance: balanceOf(i) })),
    balance: sumAmounts(openInvoices.map(balanceOf)),
    credit: sumAmounts(payments.map((t) => t.unallocated_amount ?? '0.00')),
    wallets: own.map((w) => ({
      id: w._id,
      addresses: addresses
        .filter((a) => a.wallet_id === w._id)
        .map((a) => ({ id: a._id, currency: a.currency, address: a.address, explorer: explorerFor(a.currency, a.address, scope.sandbox !== null) })),
    })),
    subscriptions: subs
      .filter((s) => inScope(s, scope))
      .sort(byNewest)
      .map((s) => ({ id: s._id, status: s.status, next_billing_date: nextBillingDateOf(s, new Date())?.toISOString() ?? null, created_at: new Date(s.created_at).toISOString() })),
    payments: payments.map((t) => ({
      id: t._id,
      currency: t.currency,
      amount: t.amount,
      usd_value: t.usd_value ?? null,
      unallocated_amount: t.unallocated_amount ?? null,
      timestamp: new Date(t.timestamp).toISOString(),
      source: paymentSource(t),
      invoices: (t.allocations ?? []).map((a) => a.invoice_id),
    })),
  };
}

/** Where a payment came from: seen on chain, entered by hand, or an approved claim (manual entry with its claim). */
export function paymentSource(t: Pick<CryptoTransactionDoc, 'transaction_source' | 'payment_claim_id'>): string {
  if (t.transaction_source === 'blockchain') return 'blockchain';
  return t.payment_claim_id ? 'approved claim' : 'manual entry';
}
