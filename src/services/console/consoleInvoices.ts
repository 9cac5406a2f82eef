/**
 * The console's invoices: the list with its filters (status, customer, due date range) and one
 * invoice's page (lines, totals, what is paid and due, the payments and their allocations, its
 * events and console actions).
 *
 * FerretDB v1 pushes down only equalities (no range, sort or limit with a filter), so:
 * - no filter: the list's buckets of the page, as GET /v1/invoices;
 * - a customer: that customer's invoices (`customer_id` equality, indexed), then the rest in code;
 * - status and/or due dates only: the scope's buckets newest first, a few at a time, each read
 *   with the status pushed down too, until the page is full. A page costs the invoices down to it,
 *   not the account's; the total is counted only when the walk reached the oldest bucket.
 */
import { Invoice, InvoiceDoc, INVOICE_STATUSES, InvoiceStatus } from '../../models/invoice';
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { Event, EventDoc } from '../../models/event';
import { Customer, CustomerDoc } from '../../models/customer';
import { findIn } from '../../models/pushdown';
import { Scope, scopeFilter, inScope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import { ID_PREFIX } from '../../lib/ids';
import { pageWindow, PAGE_SIZE } from '../../lib/pagination';
import { newestListedFirst } from '../../lib/listWindow';
import { parseCustomerQuery } from '../../lib/searchTerms';
import { subtractAmounts } from '../../billing/money';
import { explorerFor } from '../../cryptocurrency/addresses';
import type { Dependencies } from '../../dependencies';
import { presentInvoiceWithLinks } from '../billing/invoiceLinks';
import { findInvoice } from '../billing/invoices';
import { cryptoAllocationsOf } from '../billing/invoiceWrites';
import { listedBuckets, listScopeOf, listScopePage } from '../writes/listing';
import { balanceOf, customerLabels, CustomerLabel, ensureSearchTerms, paymentSource } from './consoleCustomers';
import { auditEntriesOf } from './consoleAudit';

export interface InvoiceFilter {
  status?: string;
  /** A customer id, or words of a customer's name or email. */
  customer?: string;
  /** Due date within these days (YYYY-MM-DD, both included). */
  due_from?: string;
  due_to?: string;
  page: number;
}

export interface InvoiceRow {
  id: string;
  customer_id: string;
  customer: CustomerLabel | null;
  status: InvoiceStatus;
  due_date: string;
  total_amount: string;
  amount_paid: string;
  balance: string;
  created_at: string;
}

/** A page: `count` and `pages` are null when the walk stopped before the oldest invoice (then `more` says whether a next page exists). */
export interface InvoicePage {
  rows: InvoiceRow[];
  page: number;
  count: number | null;
  pages: number | null;
  more: boolean;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Customers a name search may expand to in the invoice filter. */
const CUSTOMERS_PER_FILTER = 50;
/** Buckets read at once by the walk. */
const WALK_BATCH = 8;

const rowOf = (i: InvoiceDoc, labels: Map<string, CustomerLabel>): InvoiceRow => ({
  id: i._id,
  customer_id: i.customer_id,
  customer: labels.get(i.customer_id) ?? null,
  status: i.status,
  due_date: i.due_date,
  total_amount: i.total_amount,
  amount_paid: i.amount_paid ?? '0.00',
  balance: balanceOf(i),
  created_at: new Date(i.created_at).toISOString(),
});

/** The customers a filter names: an id of the scope, or those its words find (at most 50). */
async function customersNamed(scope: Scope, text: string): Promise<string[]> {
  const t = text.trim().slice(0, 200);
  if (t.startsWith(ID_PREFIX.customer) && !/\s/.test(t)) {
    const c = (await Customer.collection.findOne({ _id: t as never })) as CustomerDoc | null;
    return c && inScope(c, scope) ? [c._id] : [];
  }
  const parsed = parseCustomerQuery(t);
  if (!parsed) throw ApiError.invalid('Search customers with at least two letters or digits of a name or email, or give an id', 'customer');
  await ensureSearchTerms(scope);
  const found = await Customer.find({ list_scope: listScopeOf(scope), search_terms: parsed.term }).lean<CustomerDoc[]>();
  return found.filter((c) => inScope(c, scope) && parsed.matches(c)).slice(0, CUSTOMERS_PER_FILTER).map((c) => c._id);
}

export async function invoiceTable(scope: Scope, filter: InvoiceFilter): Promise<InvoicePage> {
  if (filter.status && !(INVOICE_STATUSES as readonly string[]).includes(filter.status)) throw ApiError.invalid('Unknown status', 'status');
  for (const p of ['due_from', 'due_to'] as const) if (filter[p] && !DATE.test(filter[p]!)) throw ApiError.invalid(`${p} must be a date (YYYY-MM-DD)`, p);
  const { skip, limit } = pageWindow(filter.page);
  const status = filter.status as InvoiceStatus | undefined;
  const keep = (i: InvoiceDoc) =>
    inScope(i, scope) && (!status || i.status === status) && (!filter.due_from || i.due_date >= filter.due_from) && (!filter.due_to || i.due_date <= filter.due_to);
  const finish = async (items: InvoiceDoc[], total: number | null, more: boolean): Promise<InvoicePage> => {
    const labels = await customerLabels(scope, items.map((i) => i.customer_id));
    return { rows: items.map((i) => rowOf(i, labels)), page: filter.page, count: total, pages: total === null ? null : Math.ceil(total / PAGE_SIZE), more };
  };

  if (filter.customer?.trim()) {
    const ids = await customersNamed(scope, filter.customer);
    const found = (await findIn<InvoiceDoc>(Invoice, 'customer_id', ids, status ? { status } : {})).filter(keep).sort(newestListedFirst);
    return finish(found.slice(skip, skip + limit), found.length, skip + limit < found.length);
  }
  if (!status && !filter.due_from && !filter.due_to) {
    const { items, pagination } = await listScopePage<InvoiceDoc>(Invoice, scope, filter.page);
    return finish(items, pagination.count, filter.page < pagination.pages);
  }
  // The walk: buckets newest first, until the page and one more match are found.
  const list_scope = listScopeOf(scope);
  const buckets = await listedBuckets(Invoice, scope);
  const matched: InvoiceDoc[] = [];
  let next = 0;
  while (next < buckets.length && matched.length <= skip + limit) {
    const batch = buckets.slice(next, next + WALK_BATCH);
    next += batch.length;
    const read = await Promise.all(batch.map((b) => Invoice.find({ list_scope, list_bucket: b, ...(status ? { status } : {}) }).lean<InvoiceDoc[]>()));
    matched.push(...read.flat().filter(keep).sort(newestListedFirst));
  }
  const exhausted = next >= buckets.length;
  return finish(matched.slice(skip, skip + limit), exhausted ? matched.length : null, matched.length > skip + limit);
}

/** Events of the invoice, oldest first: the same read as a subscription's timeline (the account's events, by payload id). */
async function invoiceEvents(scope: Scope, id: string): Promise<EventDoc[]> {
  return Event.find({ ...scopeFilter(scope), 'payload.id': id }).sort({ timestamp: 1, _id: 1 }).lean<EventDoc[]>();
}

/**
 * One invoice's page: the invoice as the API presents it (its hosted page and PDF links
 * included), its customer's name, what is due, each crypto allocation with its
 * payment (amount, source, the receiving address's explorer link), its events and console actions.
 */
export async function invoicePage(deps: Dependencies, scope: Scope, id: string) {
  const invoice = await findInvoice(scope, id);
  const entries = cryptoAllocationsOf(invoice);
  const [presented, labels, txs, events, audit] = await Promise.all([
    presentInvoiceWithLinks(deps, invoice),
    customerLabels(scope, [invoice.customer_id]),
    findIn<CryptoTransactionDoc>(CryptoTransaction, '_id', entries.map((e) => e.transaction_id)),
    invoiceEvents(scope, invoice._id),
    auditEntriesOf(scope, [invoice._id]),
  ]);
  const byId = new Map(txs.filter((t) => inScope(t, scope)).map((t) => [t._id, t]));
  const due = subtractAmounts(invoice.total_amount, invoice.amount_paid ?? '0.00');
  return {
    invoice: presented,
    customer: labels.get(invoice.customer_id) ?? null,
    amount_due: invoice.status === 'paid' || invoice.status === 'canceled' ? '0.00' : balanceOf(invoice),
    /** Paid beyond the total (within the slippage margin, or lines removed since). */
    overpaid: due.startsWith('-') ? due.slice(1) : null,
    hosted_invoice_url: presented.hosted_invoice_url,
    invoice_pdf: presented.invoice_pdf,
    allocations: entries.map((e) => {
      const t = byId.get(e.transaction_id);
      return {
        id: e.id,
        amount_applied: e.amount_applied,
        pays_in_full: e.pays_in_full,
        created_at: new Date(e.created_at).toISOString(),
        payment: t
          ? {
              id: t._id,
              currency: t.currency,
              amount: t.amount,
              hash: t.transaction_id,
              to_address: t.to_address,
              explorer: explorerFor(t.currency, t.to_address, scope.sandbox !== null),
              source: paymentSource(t),
              timestamp: new Date(t.timestamp).toISOString(),
            }
          : null,
        transaction_id: e.transaction_id,
      };
    }),
    events: events.map((e) => ({ id: e._id, event: e.event, at: new Date(e.timestamp).toISOString(), status: (e.payload as { status?: string }).status ?? null })),
    audit,
  };
}
