/**
 * Where a customer's payment through a claim link stands (pure), as the pay page shows it:
 * `waiting` -> `detected` (seen on chain, n of N confirmations) -> `paid` (every invoice the
 * link covers is paid).
 */
import { confirmationsOf } from '../chains/scan';

export const PAYMENT_STATES = ['waiting', 'detected', 'paid'] as const;
export type PaymentState = (typeof PAYMENT_STATES)[number];

export interface PaymentStatus {
  state: PaymentState;
  /** For `detected`: confirmations of the most confirmed pending payment, and how many make it final. */
  confirmations: number | null;
  confirmations_required: number | null;
}

/** A payment seen on chain and not yet recorded: its block, the watcher's last scanned height, the threshold. */
export interface PendingChainPayment {
  block_height: number;
  scanned_height: number | null;
  required: number;
}

export function derivePaymentStatus(input: { invoiceStatuses: readonly string[]; pending: readonly PendingChainPayment[] }): PaymentStatus {
  // Paid only when there was something to pay: a link with no invoices (a price link) is never "paid" by default.
  if (input.invoiceStatuses.length > 0 && input.invoiceStatuses.every((s) => s === 'paid')) {
    return { state: 'paid', confirmations: null, confirmations_required: null };
  }
  if (input.pending.length > 0) {
    const seen = input.pending.map((p) => ({
      // Capped at N: the watcher records a payment once it has N, and until then the page may read N.
      confirmations: Math.min(p.required, confirmationsOf(Math.max(p.scanned_height ?? p.block_height, p.block_height), p.block_height)),
      required: p.required,
    }));
    const best = seen.reduce((a, b) => (b.confirmations / b.required > a.confirmations / a.required ? b : a));
    return { state: 'detected', confirmations: best.confirmations, confirmations_required: best.required };
  }
  return { state: 'waiting', confirmations: null, confirmations_required: null };
}

/** The words the page shows for a status (server-rendered and the same in the script). */
export function paymentStatusText(s: PaymentStatus): string {
  if (s.state === 'paid') return 'Paid. Thank you: this payment is complete.';
  if (s.state === 'detected') return `Payment detected (${s.confirmations} of ${s.confirmations_required} confirmations). It is final once it has ${s.confirmations_required}.`;
  return 'Waiting for your payment.';
}
