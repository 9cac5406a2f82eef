/** Signals of the invoice due-date workflow. Pure: shared by services and workflows. */
import { defineSignal } from '@temporalio/workflow';

export interface InvoiceDueInput {
  invoiceId: string;
  dueDate: string;
}

/** The due date moved: re-arm the timer. */
export const dueDateChangedSignal = defineSignal<[string]>('dueDateChanged');
/** Paid, canceled or deleted: nothing left to watch. */
export const invoiceClosedSignal = defineSignal('invoiceClosed');
