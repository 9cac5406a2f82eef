import { InvoiceDoc } from '../models/invoice';
import { iso } from './common';

/** An invoice's customer-facing links, named as Stripe names them (services/billing/invoiceLinks.ts makes them). */
export interface InvoiceDocumentUrls {
  /** `<PUBLIC_URL>/invoice/<secret>`: the hosted page, where the customer sees and pays it. */
  hosted_invoice_url: string;
  /** `<PUBLIC_URL>/invoice/<secret>/pdf`: the invoice as a PDF. */
  invoice_pdf: string;
}

export function presentInvoice(i: InvoiceDoc, urls: InvoiceDocumentUrls) {
  return {
    id: i._id,
    customer_id: i.customer_id,
    subscription_id: i.subscription_id ?? null,
    status: i.status,
    due_date: i.due_date,
    total_amount: i.total_amount,
    amount_paid: i.amount_paid ?? '0.00',
    period_start: iso(i.period_start ?? null),
    period_end: iso(i.period_end ?? null),
    line_items: (i.line_items ?? []).map((li) => ({
      id: li._id,
      price_id: li.price_id,
      product_id: li.product_id,
      product_name: li.product_name,
      quantity: li.quantity,
      unit_amount: li.unit_amount,
      amount: li.amount,
      ...(li.description ? { description: li.description } : {}),
    })),
    hosted_invoice_url: urls.hosted_invoice_url,
    invoice_pdf: urls.invoice_pdf,
    created_at: iso(i.created_at),
    updated_at: iso(i.updated_at),
  };
}

/** Invoice event payload: the spec's shape (`id`, `object`, `customer_id`, `status`, `total_amount`) and the rest. */
export function invoiceEventPayload(i: InvoiceDoc, urls: InvoiceDocumentUrls) {
  return { ...presentInvoice(i, urls), object: 'invoice' };
}
