/**
 * Invoices: persist, record the event, and keep the due-date workflow in step
 * (started for open invoices, re-armed when the due date moves, ended when closed).
 */
import { Invoice, InvoiceDoc, InvoiceStatus, OPEN_INVOICE_STATUSES, paidMarks } from '../../models/invoice';
import { isDuplicateKey } from '../../models/errors';
import { Price, PriceDoc } from '../../models/price';
import { Product, ProductDoc } from '../../models/product';
import { Scope, scopeFilter, scopeOfDoc, findInScope, inScope } from '../../models/scope';
import { newId, derivedId, ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { centsToAmount, multiplyAmount, parseAmount, sumAmounts, toAmount } from '../../billing/money';
import { dayAfter, isCalendarDate } from '../../billing/dueDate';
import type { ChargeInput } from '../../billing/schedule';
import { subscriptionEventPayload } from '../../presenters/subscription';
import { EventToRecord, recordEvent, recordEvents } from '../writes/events';
import { findCustomer } from './customers';
import { createListed, listPage, listScopePage, recountListSlots } from '../writes/listing';
import { Subscription, SubscriptionDoc } from '../../models/subscription';
import type { Dependencies } from '../../dependencies';
import { rollupsChanged } from '../reports/reportRollups';
import { deleteInvoiceDocuments, invoiceUrls, presentInvoicesWithLinks, presentInvoiceWithLinks } from './invoiceLinks';
import { invoiceEventPayload, InvoiceDocumentUrls, presentInvoice } from '../../presenters/invoice';

export interface LineItemInput {
  price_id: string;
  quantity?: number;
  /** Overrides the price's unit amount (decimal string, major units). */
  amount?: string;
}

export interface InvoiceInput {
  customer_id: string;
  due_date: string;
  status?: InvoiceStatus;
  subscription_id?: string | null;
  line_items?: LineItemInput[];
}


export function checkDueDate(due: string): string {
  if (!isCalendarDate(due)) throw ApiError.validation('due_date', 'must be a date in YYYY-MM-DD form');
  return due;
}

export async function findInvoice(scope: Scope, id: string, param = 'id'): Promise<InvoiceDoc> {
  const invoice = await findInScope<InvoiceDoc>(Invoice, scope, id);
  if (!invoice) throw ApiError.notFound('Invoice not found', param);
  return invoice;
}

/** Line items from prices of the scope; the spec's nested errors name `line_items[][price_id]`. */
export async function buildLineItems(scope: Scope, items: LineItemInput[]) {
  const lines = [];
  for (const item of items) {
    const price = await findInScope<PriceDoc>(Price, scope, item.price_id);
    if (!price) throw ApiError.notFound(`Price not found: ${item.price_id}`, 'line_items[][price_id]');
    if (!price.active) throw ApiError.invalid(`Price is not active: ${item.price_id}`, 'line_items[][price_id]');
    const product = await findInScope<ProductDoc>(Product, scope, price.product_id);
    let unit = centsToAmount(price.amount);
    if (item.amount !== undefined) {
      const override = parseAmount(item.amount);
      if (!override) throw ApiError.invalid('Amount must be a non-negative decimal string with at most two decimals', 'line_items[][amount]');
      unit = toAmount(override);
    }
    const quantity = item.quantity ?? 1;
    lines.push({
      _id: newId(ID_PREFIX.lineItem),
      price_id: price._id,
      product_id: price.product_id,
      product_name: product?.name ?? '',
      quantity,
      unit_amount: unit,
      amount: multiplyAmount(unit, quantity),
    });
  }
  return lines;
}

/**
 * Under an Idempotency-Key (services/writes/creation.ts), a retry that took the key over from a request
 * that died after writing the invoice finds that invoice and finishes what the first attempt may
 * not have (its event, its due-date workflow), instead of billing the customer a second time.
 */
export async function createInvoice(deps: Dependencies, scope: Scope, input: InvoiceInput, opts: CreateOptions = {}) {
  const id = createdId(ID_PREFIX.invoice, opts);
  const earlier = await earlierAttempt<InvoiceDoc>(Invoice, scope, id, opts);
  if (earlier) {
    // Its due-date workflow was planned before the write; asking again is a no-op if it runs.
    if (earlier.status === 'pending') await deps.workflows.invoiceDue.watch(earlier);
    return announceCreatedInvoice(deps, scope, earlier, await invoiceUrls(deps, earlier._id));
  }
  await findCustomer(scope, input.customer_id, 'customer_id');
  const dueDate = checkDueDate(input.due_date);
  if (input.subscription_id && !(await findInScope(Subscription, scope, input.subscription_id))) {
    throw ApiError.notFound('Subscription not found', 'subscription_id');
  }
  const lines = await buildLineItems(scope, input.line_items ?? []);
  // Recorded before the invoice, so a crash between the two cannot lose its due-date workflow.
  const dueWatch = (input.status ?? 'pending') === 'pending' ? await deps.workflows.invoiceDue.plan({ _id: id, due_date: dueDate }) : null;
  const invoice = (
    await createListed(Invoice, scope, {
      _id: id,
      ...scopeFilter(scope),
      customer_id: input.customer_id,
      subscription_id: input.subscription_id ?? null,
      status: input.status ?? 'pending',
      ...(input.status === 'paid' ? paidMarks(input.customer_id, new Date()) : {}),
      due_date: dueDate,
      total_amount: sumAmounts(lines.map((l) => l.amount)),
      line_items: lines,
      billing_key: id,
    })
  ).toObject() as InvoiceDoc;
  const presented = await announceCreatedInvoice(deps, scope, invoice, await invoiceUrls(deps, invoice._id, { isNew: true }));
  await dueWatch?.start();
  return presented;
}

/** After a new invoice's write (again, on a retry that found it): its report marks and `invoice.created`, once. */
async function announceCreatedInvoice(deps: Dependencies, scope: Scope, invoice: InvoiceDoc, urls: InvoiceDocumentUrls) {
  // Open: in the receivables; created paid: paid outside the service, in the collections report.
  await rollupsChanged(deps, scope, invoice.status === 'paid' ? 'collections' : 'receivables');
  await recordEvent(scope, 'invoice.created', invoiceEventPayload(invoice, urls), { idempotencyKey: `invoice.created:${invoice._id}` });
  return presentInvoice(invoice, urls);
}

export async function getInvoice(deps: Dependencies, scope: Scope, id: string) {
  return presentInvoiceWithLinks(deps, await findInvoice(scope, id));
}

export async function listInvoices(deps: Dependencies, scope: Scope, page: number, filter: { customer_id?: string; status?: InvoiceStatus; subscription_id?: string } = {}) {
  // Filtered lists take the general path; the whole scope reads only the buckets of the page.
  const filtered = Object.values(filter).some((v) => v !== undefined);
  const { items, pagination } = filtered ? await listPage<InvoiceDoc>(Invoice, { ...scopeFilter(scope), ...filter }, page) : await listScopePage<InvoiceDoc>(Invoice, scope, page);
  return { invoices: await presentInvoicesWithLinks(deps, items), pagination };
}

export async function deleteInvoice(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  const invoice = await findInvoice(scope, id);
  await Invoice.deleteOne({ _id: id });
  await rollupsChanged(deps, scope, invoice.status === 'paid' ? 'collections' : 'receivables');
  await recountListSlots(Invoice, [invoice]);
  await deleteInvoiceDocuments(id);
  await deps.workflows.invoiceDue.close(id);
}

// ---- invoices of the subscription workflow (its activity's use case) ----

/** A subscription's invoice as written, with the events it owes (recorded by the caller, once each by key). */
export interface SubscriptionInvoiceWrite {
  invoice: InvoiceDoc;
  /** False when it found the invoice (so a retry is not counted twice). */
  created: boolean;
  events: EventToRecord[];
}

/**
 * Idempotent: the invoice is keyed by (subscription, charge); a retry finds it, and its events
 * carry the same keys. Null when the subscription is gone or canceled.
 */
export async function writeSubscriptionInvoice(
  deps: Dependencies,
  subscriptionId: string,
  charge: ChargeInput,
  invoiceDueDays: number,
  /** The subscription as the wake-up already read it. */
  stored?: SubscriptionDoc | null,
): Promise<SubscriptionInvoiceWrite | null> {
  const sub = stored !== undefined ? stored : await Subscription.findById(subscriptionId).lean<SubscriptionDoc>();
  if (!sub || sub.status === 'canceled') return null;
  const scope = scopeOfDoc(sub);
  const billingKey = `${subscriptionId}:${charge.key}`;
  // The invoice id derives from the billing key: lookups stay on `_id` (FerretDB's fast path)
  // and a second insert of the same charge is a duplicate key, not a second invoice.
  const invoiceId = derivedId(ID_PREFIX.invoice, billingKey);
  // Insert first: on Temporal's first try nothing exists yet, so a read would be wasted.
  let invoice: InvoiceDoc | null = null;
  let created = true;
  try {
    invoice = (
      await createListed(Invoice, scope, {
        _id: invoiceId,
        ...scopeFilter(scope),
        customer_id: sub.customer_id,
        subscription_id: subscriptionId,
        status: 'pending',
        due_date: dayAfter(new Date(charge.at), invoiceDueDays),
        total_amount: charge.total,
        line_items: charge.lines.map((l) => ({ _id: newId(ID_PREFIX.lineItem), ...l })),
        billing_key: billingKey,
        period_start: new Date(charge.periodStart),
        period_end: charge.periodEnd ? new Date(charge.periodEnd) : null,
      })
    ).toObject() as InvoiceDoc;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    created = false;
    invoice = await Invoice.findById(invoiceId).lean<InvoiceDoc>();
  }
  if (!invoice) return null;
  // Also on a retry (the first attempt may have died before marking).
  await rollupsChanged(deps, scope, 'receivables');
  const urls = await invoiceUrls(deps, invoice._id, { isNew: created });
  const events: EventToRecord[] = [{ event: 'invoice.created', payload: invoiceEventPayload(invoice, urls), idempotencyKey: `invoice.created:${billingKey}` }];
  if (charge.kind === 'renewal') {
    // As of just after this renewal: its next billing date is the one after it (the same on a retry).
    const renewedAt = new Date(new Date(charge.at).getTime() + 1);
    events.push({
      event: 'subscription.renewed',
      payload: { ...subscriptionEventPayload(sub, renewedAt), invoice_id: invoice._id, amount: invoice.total_amount, period_start: charge.periodStart },
      idempotencyKey: `subscription.renewed:${billingKey}`,
    });
  }
  return { invoice, created, events };
}

/** The invoice of one charge with its events recorded and its due date watched (see writeSubscriptionInvoice). */
export async function generateSubscriptionInvoice(
  deps: Dependencies,
  subscriptionId: string,
  charge: ChargeInput,
  invoiceDueDays: number,
): Promise<{ invoiceId: string; created: boolean } | null> {
  const written = await writeSubscriptionInvoice(deps, subscriptionId, charge, invoiceDueDays);
  if (!written) return null;
  await recordEvents(scopeOfDoc(written.invoice), written.events);
  if (written.invoice.status === 'pending') await deps.workflows.invoiceDue.watch(written.invoice);
  return { invoiceId: written.invoice._id, created: written.created };
}
