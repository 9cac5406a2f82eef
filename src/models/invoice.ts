import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';
import { Month, monthOf, monthsBetween } from '../billing/mrr';

export const INVOICE_STATUSES = ['pending', 'paid', 'overdue', 'canceled'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
/** Statuses of an invoice that can still be paid. */
export const OPEN_INVOICE_STATUSES: readonly InvoiceStatus[] = ['pending', 'overdue'];

const lineItemSchema = new Schema(
  {
    _id: { type: String, required: true },
    price_id: { type: String, required: true },
    product_id: { type: String, required: true },
    product_name: { type: String, required: true },
    quantity: { type: Number, required: true },
    /** Decimal strings in major units with two decimals. */
    unit_amount: { type: String, required: true },
    amount: { type: String, required: true },
    description: { type: String, default: null },
  },
  { versionKey: false },
);

const invoiceSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    customer_id: { type: String, required: true },
    subscription_id: { type: String, default: null },
    status: { type: String, enum: INVOICE_STATUSES, required: true },
    /** YYYY-MM-DD (UTC). */
    due_date: { type: String, required: true },
    total_amount: { type: String, required: true },
    /** What allocations have applied so far (decimal string). */
    amount_paid: { type: String, default: '0.00' },
    line_items: { type: [lineItemSchema], default: [] },
    /**
     * Makes generation idempotent: a subscription invoice is keyed by subscription and
     * period start, so a retried activity finds the invoice it already made.
     * Standalone invoices use their own id.
     */
    billing_key: { type: String, required: true },
    period_start: { type: Date, default: null },
    period_end: { type: Date, default: null },
    /**
     * Written true with a change that released part of what crypto paid (line items removed below
     * `amount_paid`: the entries' `released_amount`), false once every transaction it names holds
     * that credit (services/billing/invoiceChanges.ts releaseInvoiceCredit; its sweeper finds the rest).
     */
    credit_release_due: { type: Boolean, default: undefined },
    /** When it last became paid, and that month's key (`paidMarks`): written with every move to `paid`. */
    paid_at: { type: Date, default: undefined },
    paid_month_key: { type: String, default: undefined },
  },
  { timestamps, versionKey: false },
);
invoiceSchema.index({ billing_key: 1 }, { unique: true });
invoiceSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(invoiceSchema);
invoiceSchema.index({ customer_id: 1, status: 1 });
// Leading with status, so FerretDB's GIN companion (docs/storage.md) lets PostgreSQL intersect a
// payer's invoices with the open ones: an allocation reads what is open, not the payer's history.
invoiceSchema.index({ status: 1 });
invoiceSchema.index({ subscription_id: 1 });
// The credit-release sweeper's `{ credit_release_due: true }`.
invoiceSchema.index({ credit_release_due: 1 });
// A customer's invoices paid in a month (`findInvoicesPaidSince`).
invoiceSchema.index({ paid_month_key: 1 });

export type InvoiceDoc = InferSchemaType<typeof invoiceSchema> & { _id: string; created_at: Date; updated_at: Date; status: InvoiceStatus };
export type LineItemDoc = InferSchemaType<typeof lineItemSchema> & { _id: string };
export const Invoice = model('Invoice', invoiceSchema, 'invoices');

/**
 * The open (pending and overdue) invoices matching `filter` (a customer, or a scope), one query per
 * open status: each is equalities FerretDB pushes down, which PostgreSQL intersects with the
 * `status` index, so the read grows with what is open, not with the payer's history (a `$in` on
 * status would be filtered in Go after decoding every invoice the rest matched; docs/storage.md).
 */
export async function findOpenInvoices<T = InvoiceDoc>(filter: Record<string, unknown>, projection?: Record<string, 0 | 1>): Promise<T[]> {
  const found = await Promise.all(OPEN_INVOICE_STATUSES.map((status) => Invoice.collection.find({ ...filter, status } as never, projection ? { projection } : {}).toArray()));
  return found.flat() as unknown as T[];
}

/** `<customer>|<YYYY-MM>` of `at` (UTC): the customer's invoices paid in that month share it. */
export const paidMonthKey = (customerId: string, at: Date): string => monthKey(customerId, monthOf(at));
const monthKey = (customerId: string, month: Month): string => `${customerId}|${month}`;

/**
 * The fields every move of an invoice to `paid` writes with it: `paid_at`, and the month's key,
 * one equality FerretDB pushes down that finds a customer's invoices paid in a month without
 * reading the customer's history (a range on `paid_at` would be filtered in Go; docs/storage.md).
 */
export function paidMarks(customerId: string, at: Date): { paid_at: Date; paid_month_key: string } {
  return { paid_at: at, paid_month_key: paidMonthKey(customerId, at) };
}

/**
 * The customer's invoices paid at or after `since` (and still paid), one query per month from
 * `since` to `until`: what they read grows with the invoices paid in those months, not with the
 * customer's history.
 */
export async function findInvoicesPaidSince(customerId: string, since: Date, until: Date): Promise<InvoiceDoc[]> {
  const months = monthsBetween(monthOf(since), monthOf(until));
  const found = (await Promise.all(months.map((month) => Invoice.collection.find({ paid_month_key: monthKey(customerId, month) } as never).toArray()))).flat() as unknown as InvoiceDoc[];
  return found.filter((i) => i.status === 'paid' && i.paid_at != null && new Date(i.paid_at).getTime() >= since.getTime());
}
