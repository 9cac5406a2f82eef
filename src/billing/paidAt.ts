/**
 * When an invoice written before `paid_at` existed (2026-11-28) became paid, from what its
 * document holds: the crypto allocation that paid it in full, the latest where it was paid more
 * than once (reopened between); else its last update, the finance reports' rule for such
 * invoices (services/reports/reportSources.ts), as a change by hand leaves no other trace on it.
 */
export interface PaidInvoiceTrace {
  crypto_allocations?: ReadonlyArray<{ pays_in_full?: boolean | null; created_at: Date | string }> | null;
  updated_at: Date | string;
}

export function paidAtOf(invoice: PaidInvoiceTrace): Date {
  const inFull = (invoice.crypto_allocations ?? []).filter((a) => a.pays_in_full).map((a) => new Date(a.created_at).getTime());
  return new Date(inFull.length > 0 ? Math.max(...inFull) : new Date(invoice.updated_at).getTime());
}
