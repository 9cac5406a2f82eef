/**
 * When an invoice written before `paid_at` existed (2026-11-28) became paid, from what is left of
 * it: the latest moment it became paid that a trace shows, either a crypto allocation that paid it
 * in full or an `invoice.paid` event still kept (events are kept 30 days,
 * docs/adr/0508-event-and-delivery-retention.md); the latest where it was paid more than once
 * (reopened between). With neither, its last update: the finance reports' rule for such invoices
 * (services/reports/reportSources.ts), as a change by hand leaves no other trace on the invoice.
 */
export interface PaidInvoiceTrace {
  crypto_allocations?: ReadonlyArray<{ pays_in_full?: boolean | null; created_at: Date | string }> | null;
  updated_at: Date | string;
  /** The times of the invoice's `invoice.paid` events still kept. */
  paid_events?: ReadonlyArray<Date | string> | null;
}

export function paidAtOf(invoice: PaidInvoiceTrace): Date {
  const inFull = (invoice.crypto_allocations ?? []).filter((a) => a.pays_in_full).map((a) => new Date(a.created_at).getTime());
  const traces = [...inFull, ...(invoice.paid_events ?? []).map((t) => new Date(t).getTime())];
  return new Date(traces.length > 0 ? Math.max(...traces) : new Date(invoice.updated_at).getTime());
}
