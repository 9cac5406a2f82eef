import { compile, compileQuery, s } from '../validation';
import { INVOICE_STATUSES } from '../../models/invoice';
import type { InvoiceInput } from '../../services/billing/invoices';

const status = { type: 'string', enum: INVOICE_STATUSES };
const dueDate = { type: 'string', maxLength: 10 };

export const createInvoiceBody = compile<InvoiceInput>({
  type: 'object',
  required: ['customer_id', 'due_date'],
  properties: {
    customer_id: s.id,
    due_date: dueDate,
    status,
    subscription_id: { type: ['string', 'null'], maxLength: 64 },
    line_items: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        required: ['price_id'],
        properties: {
          price_id: s.id,
          quantity: { type: 'integer', minimum: 1, maximum: 1_000_000 },
          amount: { type: 'string', maxLength: 20 },
        },
      },
    },
  },
});

export const updateInvoiceBody = compile<{ status?: (typeof INVOICE_STATUSES)[number]; due_date?: string }>({
  type: 'object',
  properties: { status, due_date: dueDate },
});

export const listInvoicesQuery = compileQuery<{ page: number; customer_id?: string; status?: (typeof INVOICE_STATUSES)[number]; subscription_id?: string }>({
  type: 'object',
  properties: {
    page: s.page,
    customer_id: s.id,
    status,
    subscription_id: s.id,
  },
});
