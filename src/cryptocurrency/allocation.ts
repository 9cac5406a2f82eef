/**
 * Allocation of a payment's USD value to open invoices (pure; exact decimal math).
 *
 * Rules (docs/adr/0404-allocation-rules.md):
 * - The payment's USD value is taken to the cent (half-up) first; every output is a
 *   two-decimal string, and sum(amount_applied) + unallocated == that value exactly.
 * - Only invoices with a positive balance are considered. Order: oldest `due_date` first,
 *   then oldest `created_at`, then `id` (plain string order), so the result is deterministic.
 * - Tolerance: an invoice counts as paid when the money available for it is at least
 *   `balance - slippage * base`, where `base` is the invoice's `total` when given, else its
 *   `balance` (so with a total, the margin is relative to the whole invoice, as in "allocations
 *   reach its total within slippage"; without one, remaining >= balance * (1 - slippage)).
 *
 * `customer` mode (payment from/for a customer's wallet): walk the ordered invoices with the
 * remaining money.
 *   - remaining >= balance: apply the whole balance, paid; continue with the rest.
 *   - otherwise, remaining within tolerance: apply all of the remaining, paid; nothing is left.
 *   - otherwise (a real underpayment): apply all of the remaining to that invoice, NOT paid;
 *     nothing is left (so a partial payment reduces the oldest invoice's balance).
 *   What is left after every open invoice is paid stays unallocated (credit).
 *
 * `account` mode (payment to an account-wallet address, no customer known): the oldest
 * invoice (same order) whose balance is within tolerance of the payment from below or equal
 * to it, i.e. `balance - margin <= payment <= balance + margin`, gets
 * min(payment, balance), paid; any overpayment within the margin stays unallocated. No match:
 * nothing is allocated.
 *
 * Idempotence lives with the caller (allocations are recorded per transaction); this module
 * only computes one allocation from a snapshot.
 */
import Decimal from 'decimal.js';
import { Dec, toCents, toDecimal } from './amounts';

export interface OpenInvoice {
  id: string;
  /** `YYYY-MM-DD`. */
  due_date: string;
  /** ISO 8601 timestamp. */
  created_at: string;
  /** USD still owed, decimal string (two decimals). */
  balance: string;
  /** Optional invoice total (USD); when given the slippage margin is relative to it. */
  total?: string;
}

export interface AllocationInput {
  /** USD value of the payment (decimal string; rounded to cents half-up). */
  paymentUsd: string;
  openInvoices: readonly OpenInvoice[];
  /** Fraction, e.g. "0.005" for 0.5%. 0 <= slippage < 1. */
  slippage: string;
  mode: 'customer' | 'account';
}

export interface Allocation {
  invoice_id: string;
  amount_applied: string;
  pays_in_full: boolean;
}

export interface AllocationResult {
  allocations: Allocation[];
  unallocated: string;
}

function compareInvoices(a: OpenInvoice, b: OpenInvoice): number {
  if (a.due_date !== b.due_date) return a.due_date < b.due_date ? -1 : 1;
  const ta = Date.parse(a.created_at);
  const tb = Date.parse(b.created_at);
  if (!Number.isNaN(ta) && !Number.isNaN(tb) && ta !== tb) return ta - tb;
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}

/** Invoices in allocation order (oldest due date, then created_at, then id). */
export function orderInvoices<T extends OpenInvoice>(invoices: readonly T[]): T[] {
  return [...invoices].sort(compareInvoices);
}

function parseSlippage(s: string): Decimal {
  const d = toDecimal(s, 'slippage');
  if (d.isNegative() || d.gte(1)) throw new RangeError('slippage must be a fraction with 0 <= slippage < 1');
  return d;
}

/** The shortfall tolerated on an invoice: slippage * (total ?? balance). */
function marginFor(inv: OpenInvoice, balance: Decimal, slippage: Decimal): Decimal {
  const base = inv.total !== undefined ? toDecimal(inv.total, 'total') : balance;
  return base.abs().times(slippage);
}

export function allocatePayment(input: AllocationInput): AllocationResult {
  const payment = new Dec(toCents(input.paymentUsd));
  if (payment.isNegative()) throw new RangeError('paymentUsd must not be negative');
  const slippage = parseSlippage(input.slippage);
  const open = orderInvoices(input.openInvoices)
    .map((inv) => ({ inv, balance: new Dec(toCents(inv.balance)) }))
    .filter((x) => x.balance.gt(0));

  const allocations: Allocation[] = [];
  let remaining = payment;

  if (input.mode === 'account') {
    if (payment.gt(0)) {
      for (const { inv, balance } of open) {
        const margin = marginFor(inv, balance, slippage);
        if (payment.gte(balance.minus(margin)) && payment.lte(balance.plus(margin))) {
          const applied = Decimal.min(payment, balance);
          allocations.push({ invoice_id: inv.id, amount_applied: applied.toFixed(2), pays_in_full: true });
          remaining = payment.minus(applied);
          break;
        }
      }
    }
  } else if (input.mode === 'customer') {
    for (const { inv, balance } of open) {
      if (remaining.lte(0)) break;
      if (remaining.gte(balance)) {
        allocations.push({ invoice_id: inv.id, amount_applied: balance.toFixed(2), pays_in_full: true });
        remaining = remaining.minus(balance);
        continue;
      }
      const paid = remaining.gte(balance.minus(marginFor(inv, balance, slippage)));
      allocations.push({ invoice_id: inv.id, amount_applied: remaining.toFixed(2), pays_in_full: paid });
      remaining = new Dec(0);
    }
  } else {
    throw new RangeError(`unknown allocation mode ${String((input as { mode: unknown }).mode)}`);
  }

  return { allocations, unallocated: remaining.toFixed(2) };
}

/**
 * The open invoices after applying `result`: those paid in full are gone, the others have
 * their balance reduced by what was applied. Useful to callers and for checks.
 */
export function applyAllocations<T extends OpenInvoice>(invoices: readonly T[], result: AllocationResult): T[] {
  const byId = new Map(result.allocations.map((a) => [a.invoice_id, a]));
  const out: T[] = [];
  for (const inv of invoices) {
    const a = byId.get(inv.id);
    if (!a) {
      out.push(inv);
      continue;
    }
    if (a.pays_in_full) continue;
    out.push({ ...inv, balance: new Dec(toCents(inv.balance)).minus(a.amount_applied).toFixed(2) });
  }
  return out;
}
