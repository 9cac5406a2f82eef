import type { ActivityDeps } from './deps';
import { markInvoiceOverdue } from '../services/invoices';

/** Activities of the billing domain. */
export function createBillingActivities(_deps: ActivityDeps) {
  return {
    /** pending -> overdue when still due on that date; true when the invoice is overdue. */
    markInvoiceOverdue: (invoiceId: string, dueDate: string) => markInvoiceOverdue(invoiceId, dueDate),
  };
}
