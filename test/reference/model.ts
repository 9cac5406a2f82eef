/**
 * Reference model of the finance reports (issue 24, item 3): MRR movements, receivables aging
 * and collections, written from their definitions (docs/finance-console.md, the doc comments of the
 * report endpoints) over plain arrays, integer cents and BigInt. It imports nothing from src/
 * and shares none of its code or its structure: no decimal library, no rollups. The property in
 * test/reference/reports.test.ts holds the production reports to it.
 *
 * Definitions used:
 * - MRR of a subscription at an instant: nothing once canceled (from `canceledAt` on), else the
 *   phase with start <= t < end; each recurring item is worth price x quantity per `every`
 *   intervals, a month being 365/12 days, 52/12 weeks or 1/12 year; the exact sum over the
 *   items is rounded once, to the cent, half up. A month's figure is the one at its last
 *   millisecond (UTC); a subscription going 0 -> x is new, x -> 0 churned, else up is expansion
 *   and down contraction.
 * - Aging on day D: invoices still open and created by the end of D, by whole days past due
 *   (D - due date): 0 or less current, 1-30, 31-60, 61-90, over 90; amounts are balances.
 * - Collections: each payment is worth its coins x the USD price at its instant (the sample
 *   closest to it, the earlier on a tie), rounded half up to the cent; it pays the payer's open
 *   invoices oldest due date first (then oldest, then by id) and whatever is left is credit; a
 *   payment to the account wallet pays only the oldest open invoice whose balance it matches
 *   within the slippage margin. An invoice is paid once what it received is within
 *   slippage x total of its total. An invoice marked paid by hand with nothing received counts
 *   in USD at its total, in the month it was marked.
 */

export type Interval = 'day' | 'week' | 'month' | 'year';

export interface RefItem {
  recurring: boolean;
  interval: Interval;
  every: number;
  quantity: number;
  priceCents: number;
  overrideCents: number | null;
}

export interface RefSubscription {
  phases: { start: number; end: number | null; items: RefItem[] }[];
  canceledAt: number | null;
}

/** Intervals per month, as a fraction [numerator, denominator]. */
const PER_MONTH: Record<Interval, [bigint, bigint]> = { day: [365n, 12n], week: [52n, 12n], month: [1n, 1n], year: [1n, 12n] };

/** num / den rounded half up (both non-negative). */
const halfUp = (num: bigint, den: bigint) => (2n * num + den) / (2n * den);

export function refMrrAt(sub: RefSubscription, t: number): number {
  if (sub.canceledAt !== null && t >= sub.canceledAt) return 0;
  const phase = sub.phases.find((p) => p.start <= t && (p.end === null || t < p.end));
  if (!phase) return 0;
  let num = 0n;
  let den = 1n;
  for (const item of phase.items.filter((i) => i.recurring)) {
    const [n, d] = PER_MONTH[item.interval];
    const itemNum = BigInt(item.overrideCents ?? item.priceCents) * BigInt(item.quantity) * n;
    const itemDen = d * BigInt(item.every);
    [num, den] = [num * itemDen + itemNum * den, den * itemDen];
  }
  return Number(halfUp(num, den));
}

/** `YYYY-MM` -> [year, month index]. */
const ym = (month: string): [number, number] => [Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1];
/** The last millisecond of `month`, shifted by `shift` months. */
const lastMs = (month: string, shift = 0) => Date.UTC(ym(month)[0], ym(month)[1] + shift + 1, 1) - 1;

export interface RefMrrMonth {
  month: string;
  opening: number;
  closing: number;
  new: number;
  expansion: number;
  contraction: number;
  churned: number;
  active: number;
  came: number;
  left: number;
}

export function refMrr(subs: RefSubscription[], months: string[]): RefMrrMonth[] {
  return months.map((month) => {
    const row: RefMrrMonth = { month, opening: 0, closing: 0, new: 0, expansion: 0, contraction: 0, churned: 0, active: 0, came: 0, left: 0 };
    for (const sub of subs) {
      const was = refMrrAt(sub, lastMs(month, -1));
      const is = refMrrAt(sub, lastMs(month));
      row.opening += was;
      row.closing += is;
      if (is > 0) row.active++;
      if (was === 0 && is > 0) [row.new, row.came] = [row.new + is, row.came + 1];
      else if (was > 0 && is === 0) [row.churned, row.left] = [row.churned - was, row.left + 1];
      else if (is > was) row.expansion += is - was;
      else row.contraction += is - was;
    }
    return row;
  });
}

// ---- invoices, payments and the history they make --------------------------------------------

export interface RefInvoice {
  id: string;
  customer: string;
  createdAt: number;
  /** YYYY-MM-DD */
  due: string;
  totalCents: number;
  receivedCents: number;
  open: boolean;
  markedPaidAt: number | null;
}

export interface RefPayment {
  at: number;
  customer: string | null;
  currency: 'BTC' | 'ETH';
  /** Coins in the smallest unit (satoshi, wei). */
  units: bigint;
  source: 'blockchain' | 'manual_entry';
  usdCents: number;
  applied: number[];
  creditCents: number;
}

export type RefEvent =
  | { kind: 'invoice'; at: number; customer: string; due: string; totalCents: number }
  | { kind: 'pay'; at: number; customer: string | null; currency: 'BTC' | 'ETH'; units: bigint; source: 'blockchain' | 'manual_entry' }
  | { kind: 'markPaid'; at: number; invoice: number };

export const DECIMALS = { BTC: 8, ETH: 18 } as const;

/**
 * Plays the events in order. `priceCents(currency, slot)`: the USD price in cents of the
 * 5-minute sample `slot` (its instant is slot x 5 min); `slippagePpm`: the margin in millionths.
 */
export function refHistory(events: RefEvent[], priceCents: (currency: 'BTC' | 'ETH', slot: number) => number, slippagePpm: number) {
  const invoices: RefInvoice[] = [];
  const payments: RefPayment[] = [];
  const order = (a: RefInvoice, b: RefInvoice) => (a.due !== b.due ? (a.due < b.due ? -1 : 1) : a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  // Paid: received >= total - slippage x total, compared in millionths of a cent.
  const settled = (inv: RefInvoice, received: number) => BigInt(received) * 1_000_000n >= BigInt(inv.totalCents) * BigInt(1_000_000 - slippagePpm);
  for (const e of events) {
    if (e.kind === 'invoice') {
      invoices.push({ id: `inv_${String(invoices.length).padStart(4, '0')}`, customer: e.customer, createdAt: e.at, due: e.due, totalCents: e.totalCents, receivedCents: 0, open: true, markedPaidAt: null });
    } else if (e.kind === 'markPaid') {
      const inv = invoices[e.invoice % Math.max(invoices.length, 1)];
      if (inv?.open) [inv.open, inv.markedPaidAt] = [false, e.at];
    } else {
      const slot = Math.floor((e.at + 150_000 - 1) / 300_000); // the nearest 5-minute sample, the earlier on a tie
      const usdCents = Number(halfUp(e.units * BigInt(priceCents(e.currency, slot)), 10n ** BigInt(DECIMALS[e.currency])));
      const payment: RefPayment = { ...e, usdCents, applied: [], creditCents: usdCents };
      const candidates = invoices.filter((i) => i.open && i.totalCents > i.receivedCents && (e.customer === null || i.customer === e.customer)).sort(order);
      if (e.customer === null) {
        const match = candidates.find((i) => {
          const margin = BigInt(i.totalCents) * BigInt(slippagePpm);
          const diff = BigInt(usdCents - (i.totalCents - i.receivedCents)) * 1_000_000n;
          return -margin <= diff && diff <= margin;
        });
        if (match) {
          const applied = Math.min(usdCents, match.totalCents - match.receivedCents);
          [match.receivedCents, match.open, payment.applied, payment.creditCents] = [match.receivedCents + applied, false, [applied], usdCents - applied];
        }
      } else {
        for (const inv of candidates) {
          if (payment.creditCents === 0) break;
          const applied = Math.min(payment.creditCents, inv.totalCents - inv.receivedCents);
          inv.receivedCents += applied;
          inv.open = !settled(inv, inv.receivedCents);
          payment.applied.push(applied);
          payment.creditCents -= applied;
        }
      }
      payments.push(payment);
    }
  }
  return { invoices, payments };
}

// ---- aging ------------------------------------------------------------------------------------

const DAY = 86_400_000;
export const BUCKETS = [
  ['current', -Infinity, 0],
  ['1_30', 1, 30],
  ['31_60', 31, 60],
  ['61_90', 61, 90],
  ['over_90', 91, Infinity],
] as const;

export function refAging(invoices: RefInvoice[], asOf: string) {
  const dayOf = (d: string) => Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)) - 1, Number(d.slice(8, 10)));
  const open = invoices
    .filter((i) => i.open && i.createdAt < dayOf(asOf) + DAY)
    .map((i) => ({ id: i.id, due: i.due, days: (dayOf(asOf) - dayOf(i.due)) / DAY, balance: i.totalCents - i.receivedCents }))
    .sort((a, b) => (a.due !== b.due ? (a.due < b.due ? -1 : 1) : a.id < b.id ? -1 : 1));
  const buckets = BUCKETS.map(([bucket, lo, hi]) => {
    const list = open.filter((i) => i.days >= lo && i.days <= hi);
    return { bucket, ids: list.map((i) => i.id), cents: list.reduce((s, i) => s + i.balance, 0) };
  });
  const overdue = buckets.slice(1);
  return {
    buckets,
    total: { count: open.length, cents: open.reduce((s, i) => s + i.balance, 0) },
    overdue: { count: overdue.reduce((n, b) => n + b.ids.length, 0), cents: overdue.reduce((s, b) => s + b.cents, 0) },
  };
}

// ---- collections ------------------------------------------------------------------------------

export interface RefCollectionRow {
  month: string;
  currency: string;
  source: 'blockchain' | 'manual_entry' | 'invoice_marked_paid';
  payments: number;
  units: bigint;
  usdCents: number;
  appliedCents: number;
  creditCents: number;
}

const monthOfMs = (t: number) => new Date(t).toISOString().slice(0, 7);

export function refCollections(history: ReturnType<typeof refHistory>, months: string[]) {
  const rows = new Map<string, RefCollectionRow>();
  const add = (month: string, currency: string, source: RefCollectionRow['source'], units: bigint, usd: number, applied: number, credit: number) => {
    if (!months.includes(month)) return;
    const key = JSON.stringify([month, currency, source]);
    const r = rows.get(key) ?? { month, currency, source, payments: 0, units: 0n, usdCents: 0, appliedCents: 0, creditCents: 0 };
    rows.set(key, { ...r, payments: r.payments + 1, units: r.units + units, usdCents: r.usdCents + usd, appliedCents: r.appliedCents + applied, creditCents: r.creditCents + credit });
  };
  for (const p of history.payments) add(monthOfMs(p.at), p.currency, p.source, p.units, p.usdCents, p.usdCents - p.creditCents, p.creditCents);
  for (const i of history.invoices) {
    if (i.markedPaidAt !== null && i.receivedCents === 0 && i.totalCents > 0) add(monthOfMs(i.markedPaidAt), 'USD', 'invoice_marked_paid', BigInt(i.totalCents), i.totalCents, i.totalCents, 0);
  }
  const credit = new Map<string | null, { cents: number; payments: number }>();
  for (const p of history.payments.filter((x) => x.creditCents > 0)) {
    const c = credit.get(p.customer) ?? { cents: 0, payments: 0 };
    credit.set(p.customer, { cents: c.cents + p.creditCents, payments: c.payments + 1 });
  }
  const sorted = [...rows.values()].sort((a, b) => (a.month !== b.month ? (a.month < b.month ? -1 : 1) : a.currency !== b.currency ? (a.currency < b.currency ? -1 : 1) : a.source < b.source ? -1 : 1));
  return {
    rows: sorted,
    months: months.map((month) => ({ month, usdCents: sorted.filter((r) => r.month === month).reduce((s, r) => s + r.usdCents, 0), payments: sorted.filter((r) => r.month === month).reduce((n, r) => n + r.payments, 0) })),
    credit,
  };
}

/** Cents as a two-decimal string; smallest units as a plain decimal without trailing zeros. */
export const centsText = (c: number) => `${c < 0 ? '-' : ''}${Math.floor(Math.abs(c) / 100)}.${String(Math.abs(c) % 100).padStart(2, '0')}`;
export function unitsText(units: bigint, decimals: number): string {
  const s = units.toString().padStart(decimals + 1, '0');
  const frac = s.slice(s.length - decimals).replace(/0+$/, '');
  return s.slice(0, s.length - decimals) + (frac ? `.${frac}` : '');
}
