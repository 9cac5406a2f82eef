/**
 * What a multi-phase subscription bills, and when: a pure plan computed from the phases,
 * the billing cycle anchor and the proration behaviour. The subscription workflow asks it for
 * every charge due up to "now" (so missed billing dates are caught up) and for the next
 * instant to wake at. Charges are computed from the first phase every time (never from a
 * previous run), so the same inputs always give the same charges, and each charge has a key
 * unique within the subscription (its phase and period start), which makes invoice
 * generation idempotent. Decimal math only.
 *
 * Rules (docs/adr/0306-billing-plan-and-proration.md):
 * - Billing dates step from `billing_cycle_anchor` (else the first phase's start) by the
 *   interval of the phase in force (see calendar.ts for month-end clamping). Later phases keep
 *   that anchor, except under `always_invoice`, where each later phase starts a fresh cycle
 *   at its own start (so the full period it bills at once is a real full period).
 * - At the subscription's start `none` bills nothing, even on a billing date: charges start on
 *   the next billing cycle. Otherwise, at a phase start that is a billing date, every behaviour
 *   bills a full period. At one that is not: `create_prorations` bills the fraction of the
 *   period up to the next billing date (by time); `always_invoice` bills a full period's price;
 *   `none` bills nothing until the next billing date.
 * - At a later phase's start, `create_prorations` and `always_invoice` credit the unused part
 *   of what the previous phase billed for the time after the change (`none` credits nothing).
 * - Renewals bill each full period in advance, on its billing date, while the phase lasts.
 * - One-time items bill once, in full, at their phase's start.
 * - A negative net is carried as credit to the next charges (shown there as a negative
 *   "Credit carried" line); no invoice is negative. A charge whose total is zero (a free
 *   phase, a downgrade, a renewal fully paid by credit) makes no invoice. Credit left when the
 *   subscription ends or is canceled is not refunded by the plan.
 * - Nothing is billed at or after `canceledAt` or the last phase's end; the period billed
 *   last may run past it and is not prorated back.
 *
 * Cost: a phase's renewals all bill the same amount, so the renewals before a given instant
 * (and the ones carried credit pays for in full) are skipped arithmetically, never walked:
 * every question about "now" costs O(phases), however old the subscription or short its
 * interval, and a caller walks only the charges it asked for.
 *
 * Pure: no I/O, no clock (every function takes the instant it reasons about); safe to import
 * from Temporal workflows.
 */
import { Money, toAmount } from './money';
import { Interval, billingDate, nextBillingDate, periodContaining } from './calendar';
import {
  DESCRIPTIONS,
  ProrationBehavior,
  ProrationItem,
  ProrationLine,
  applyCarriedCredit,
  initialCharge,
  linesTotal,
  prorateItems,
  unusedCredit,
} from './proration';

export type { ProrationBehavior } from './proration';
export { validatePhases } from './phases';
export type { PhaseRuleViolation, PhaseShape } from './phases';

/** An item of a phase, with its effective unit price. */
export interface PlanItem {
  price_id: string;
  product_id: string;
  product_name: string;
  quantity: number;
  /** Effective unit price (overridden or standard), decimal string in major units. */
  unit_amount: string;
  recurring: boolean;
  interval: Interval | null;
  interval_count: number | null;
}

export interface PlanPhase {
  start: Date;
  /** Exclusive; null for an open-ended (last) phase. */
  end: Date | null;
  items: PlanItem[];
}

export interface BillingPlan {
  /** `billing_cycle_anchor`; null to anchor on the first phase's start. */
  anchor: Date | null;
  behavior: ProrationBehavior;
  /** Valid per `validatePhases`: sequential, without gaps, only the last open-ended. */
  phases: PlanPhase[];
  canceledAt?: Date | null;
}

/** An invoice line: `amount = unit_amount x quantity`; credits are negative. */
export interface ChargeLine {
  price_id: string;
  product_id: string;
  product_name: string;
  quantity: number;
  unit_amount: string;
  amount: string;
  description: string;
}

export type ChargeKind = 'start' | 'phase_change' | 'renewal';

export interface Charge {
  /**
   * `<phase index>:<period start, ISO 8601>`: unique within the subscription, the invoice's
   * idempotency key. Period starts alone are unique too (charges are strictly increasing in
   * time), the phase index makes the key readable.
   */
  key: string;
  /** The billing date: when the charge is due and its invoice generated (= periodStart). */
  at: Date;
  phaseIndex: number;
  /** `start` for the first phase's start, `phase_change` for a later phase's start. */
  kind: ChargeKind;
  periodStart: Date;
  /** The next billing date after `periodStart`; null for a phase without recurring items. */
  periodEnd: Date | null;
  lines: ChargeLine[];
  /** What to invoice, never negative. */
  total: string;
  /** Carried credit used by this charge (also shown as a negative line). */
  creditApplied: string;
  /** Credit still carried after this charge. */
  creditCarried: string;
}

const FAR_FUTURE = new Date(Date.UTC(9999, 0, 1));
const ZERO = '0.00';

interface Cycle {
  interval: Interval;
  count: number;
  anchor: Date;
}

interface Billed {
  items: PlanItem[];
  from: Date;
  end: Date;
  /** What was charged per unit of each item for [from, end). */
  units: string[];
}

function recurringItems(p: PlanPhase): PlanItem[] {
  return p.items.filter((i) => i.recurring);
}

function cycleOf(plan: BillingPlan, index: number): Cycle | null {
  const phase = plan.phases[index];
  const first = recurringItems(phase)[0];
  if (!first?.interval || !first.interval_count) return null;
  const subscriptionAnchor = plan.anchor ?? plan.phases[0].start;
  const anchor = index > 0 && plan.behavior === 'always_invoice' ? phase.start : subscriptionAnchor;
  return { interval: first.interval, count: first.interval_count, anchor };
}

function phaseEnd(plan: BillingPlan, index: number): Date {
  const end = plan.phases[index].end ?? FAR_FUTURE;
  return plan.canceledAt && plan.canceledAt < end ? plan.canceledAt : end;
}

function chargeLines(items: readonly PlanItem[], lines: readonly ProrationLine[]): ChargeLine[] {
  return lines.map((l) => ({
    price_id: items[l.index].price_id,
    product_id: items[l.index].product_id,
    product_name: items[l.index].product_name,
    quantity: l.quantity,
    unit_amount: l.unit_amount,
    amount: l.amount,
    description: l.description,
  }));
}

const asProrationItems = (items: readonly PlanItem[], units?: readonly string[]): ProrationItem[] =>
  items.map((i, n) => ({ price_id: i.price_id, quantity: i.quantity, unit_amount: units ? units[n] : i.unit_amount }));

type RawCharge = Omit<Charge, 'key' | 'total' | 'creditApplied' | 'creditCarried'>;

interface StreamOptions {
  /** Renewals billed before this instant are skipped (their credit use still counted). */
  from?: Date;
  /** Also skip renewals that carried credit pays in full (they make no invoice). */
  invoicedOnly?: boolean;
}

/** The index of the first billing date at or after t. */
function firstIndexOnOrAfter(cycle: Cycle, t: Date): number {
  const p = periodContaining(cycle.anchor, cycle.interval, cycle.count, t);
  return p.start.getTime() === t.getTime() ? p.index : p.index + 1;
}

/**
 * Every charge of the plan in time order (strictly increasing `at`), with credit carried
 * along; includes charges whose lines are all zero unless skipped by `options`. Infinite for
 * an open-ended paid phase: consume lazily.
 */
function* chargeStream(plan: BillingPlan, options: StreamOptions = {}): Generator<Charge> {
  let credit = ZERO;
  let billed: Billed | null = null;

  const settle = (c: RawCharge, net = linesTotal(c.lines)): Charge => {
    const key = `${c.phaseIndex}:${c.periodStart.toISOString()}`;
    if (credit === ZERO && !net.startsWith('-')) {
      // Nothing carried and nothing to carry: the common case of a plain renewal.
      return { ...c, key, total: net, creditApplied: ZERO, creditCarried: ZERO };
    }
    const lines = [...c.lines];
    const applied = applyCarriedCredit(net, credit);
    if (applied.applied !== ZERO) {
      const ref = lines.find((l) => new Money(l.amount).gt(0))!;
      const neg = toAmount(new Money(applied.applied).neg());
      lines.push({ ...ref, quantity: 1, unit_amount: neg, amount: neg, description: DESCRIPTIONS.carriedCredit });
    }
    credit = applied.remainingCredit;
    return { ...c, key, lines, total: applied.total, creditApplied: applied.applied, creditCarried: credit };
  };

  for (let index = 0; index < plan.phases.length; index++) {
    const phase = plan.phases[index];
    const start = phase.start;
    const end = phaseEnd(plan, index);
    if (start >= end) return;
    const cycle = cycleOf(plan, index);
    const lines: ChargeLine[] = [];

    // Credit what the previous phase billed for the time after this change.
    if (index > 0 && plan.behavior !== 'none' && billed && billed.end > start) {
      const unused = unusedCredit({ billedFrom: billed.from, billedTo: billed.end, changeAt: start, items: asProrationItems(billed.items, billed.units) });
      lines.push(...chargeLines(billed.items, unused.lines).filter((l) => !new Money(l.amount).isZero()));
    }
    const oneTime = phase.items.filter((i) => !i.recurring);
    lines.push(...chargeLines(oneTime, prorateItems(asProrationItems(oneTime), 1, DESCRIPTIONS.oneTime)));

    billed = null;
    const items = recurringItems(phase);
    if (cycle) {
      const first = initialCharge(plan.behavior, { start, anchor: cycle.anchor, interval: cycle.interval, count: cycle.count, items: asProrationItems(items), continuing: index > 0 });
      if (first) {
        lines.push(...chargeLines(items, first.lines));
        billed = { items, from: start, end: first.periodEnd, units: first.lines.map((l) => l.unit_amount) };
      }
    }
    const periodEnd = cycle ? nextBillingDate(cycle.anchor, cycle.interval, cycle.count, start) : null;
    if (lines.length > 0) {
      yield settle({ at: start, phaseIndex: index, kind: index === 0 ? 'start' : 'phase_change', periodStart: start, periodEnd, lines });
    }

    // Renewals: each full period in advance, on its billing date, while the phase lasts.
    // A free phase (every renewal line zero) yields no renewals: they would bill nothing and
    // carry no credit, and skipping them keeps the stream finite for an open-ended free phase.
    if (!cycle) continue;
    const renewal = prorateItems(asProrationItems(items), 1, DESCRIPTIONS.full);
    const renewalTotal = linesTotal(renewal);
    if (renewal.every((l) => new Money(l.amount).isZero())) continue;
    const renewalUnits = renewal.map((l) => l.unit_amount);
    const first = periodContaining(cycle.anchor, cycle.interval, cycle.count, start).index + 1;
    const stop = firstIndexOnOrAfter(cycle, end); // renewals are indexes first .. stop - 1
    let skip = options.from ? firstIndexOnOrAfter(cycle, options.from) - first : 0;
    if (options.invoicedOnly && credit !== ZERO) {
      // Renewals while credit covers a whole renewal are free: floor(credit / renewal).
      skip = Math.max(skip, new Money(credit).div(renewalTotal).floor().toNumber());
    }
    skip = Math.min(Math.max(skip, 0), stop - first);
    if (skip > 0) {
      const used = Money.min(new Money(credit), new Money(renewalTotal).times(skip));
      credit = toAmount(new Money(credit).minus(used));
      const last = first + skip - 1;
      billed = { items, from: billingDate(cycle.anchor, cycle.interval, cycle.count, last), end: billingDate(cycle.anchor, cycle.interval, cycle.count, last + 1), units: renewalUnits };
    }
    for (let n = first + skip; n < stop; n++) {
      const at = billingDate(cycle.anchor, cycle.interval, cycle.count, n);
      const next = billingDate(cycle.anchor, cycle.interval, cycle.count, n + 1);
      yield settle({ at, phaseIndex: index, kind: 'renewal', periodStart: at, periodEnd: next, lines: chargeLines(items, renewal) }, renewalTotal);
      billed = { items, from: at, end: next, units: renewalUnits };
    }
  }
}

// Amounts come from toAmount: zero is exactly "0.00", negatives start with "-".
const isZero = (amount: string) => amount === ZERO;
const hasMoney = (c: Charge) => !isZero(c.total) || c.lines.some((l) => !isZero(l.amount));
const invoiced = (c: Charge) => !isZero(c.total);

/** One charge as the subscription workflow passes it to its activities (dates as ISO 8601 strings). */
export interface ChargeInput {
  key: string;
  at: string;
  kind: ChargeKind;
  periodStart: string;
  periodEnd: string | null;
  lines: ChargeLine[];
  total: string;
}

export function chargeInputOf(charge: Charge): ChargeInput {
  return {
    key: charge.key,
    at: charge.at.toISOString(),
    kind: charge.kind,
    periodStart: charge.periodStart.toISOString(),
    periodEnd: charge.periodEnd?.toISOString() ?? null,
    lines: charge.lines,
    total: charge.total,
  };
}

/**
 * Every charge of the plan with `at <= until`, oldest first, credit carried along. Includes
 * charges with a zero total but non-zero lines (a downgrade whose credit is carried); leaves
 * out charges whose lines are all zero (a free phase).
 */
export function planCharges(plan: BillingPlan, until: Date, after?: Date | null): Charge[] {
  return collect(plan, until, after ?? null, false, hasMoney);
}

/**
 * Charges that make an invoice (total above zero) with `after < at <= until` (`after` null:
 * from the start). The subscription workflow asks for those since it last looked.
 */
export function invoicedCharges(plan: BillingPlan, until: Date, after?: Date | null): Charge[] {
  return collect(plan, until, after ?? null, true, invoiced);
}

/**
 * Most charges one call may return: over ten years of daily renewals. Phase starts are
 * limited to a year back (docs/adr/0305-billing-calendar-and-date-limits.md), so the workflow's catch-up stays far below it;
 * a caller past it asked for too wide a range.
 */
export const MAX_CHARGES_PER_CALL = 5_000;

/** The next `count` invoiced charges after `after`, taken lazily (however long the plan runs). */
export function upcomingCharges(plan: BillingPlan, after: Date, count: number): Charge[] {
  const out: Charge[] = [];
  if (count <= 0) return out;
  for (const c of chargeStream(plan, { from: new Date(after.getTime() + 1), invoicedOnly: true })) {
    if (c.at <= after || !invoiced(c)) continue;
    out.push(c);
    if (out.length === count) break;
  }
  return out;
}

function collect(plan: BillingPlan, until: Date, after: Date | null, invoicedOnly: boolean, keep: (c: Charge) => boolean): Charge[] {
  const out: Charge[] = [];
  const from = after ? new Date(after.getTime() + 1) : undefined;
  for (const c of chargeStream(plan, { from, invoicedOnly })) {
    if (c.at > until) break;
    if (from && c.at < from) continue;
    if (!keep(c)) continue;
    if (out.length === MAX_CHARGES_PER_CALL) throw new RangeError(`more than ${MAX_CHARGES_PER_CALL} charges in one range`);
    out.push(c);
  }
  return out;
}

/** An invoice to generate, as returned by {@link planBilling}. */
export interface PlannedInvoice {
  /** Idempotency key, unique within the subscription: `<phase index>:<period start ISO>`. */
  key: string;
  kind: ChargeKind;
  /** When to generate it; equal to `periodStart` (periods are billed in advance). */
  billingDate: Date;
  periodStart: Date;
  periodEnd: Date | null;
  phaseIndex: number;
  lines: ChargeLine[];
  /** Above zero. */
  total: string;
  creditApplied: string;
  creditCarried: string;
}

export interface PlanBillingInput {
  phases: PlanPhase[];
  billingCycleAnchor?: Date | null;
  prorationBehavior: ProrationBehavior;
  canceledAt?: Date | null;
  /** Invoices with `from <= billingDate < to` are returned. */
  from: Date;
  to: Date;
}

/**
 * The invoices to generate with billing dates in `[from, to)`, in order. Computed from the
 * first phase whatever the range, so carried credit is right and the result over `[a, c)` is
 * the result over `[a, b)` followed by the one over `[b, c)`. Charges with a zero total
 * (free phases, credit-covered renewals, downgrades) make no invoice.
 */
export function planBilling(input: PlanBillingInput): PlannedInvoice[] {
  const plan: BillingPlan = { anchor: input.billingCycleAnchor ?? null, behavior: input.prorationBehavior, phases: input.phases, canceledAt: input.canceledAt ?? null };
  const out: PlannedInvoice[] = [];
  for (const c of chargeStream(plan, { from: input.from, invoicedOnly: true })) {
    if (c.at >= input.to) break;
    if (c.at < input.from || !invoiced(c)) continue;
    out.push({
      key: c.key,
      kind: c.kind,
      billingDate: c.at,
      periodStart: c.periodStart,
      periodEnd: c.periodEnd,
      phaseIndex: c.phaseIndex,
      lines: c.lines,
      total: c.total,
      creditApplied: c.creditApplied,
      creditCarried: c.creditCarried,
    });
  }
  return out;
}

/** The index of the phase in force at t, or null before the first and after the last. */
export function activePhaseIndex(plan: BillingPlan, t: Date): number | null {
  for (let i = 0; i < plan.phases.length; i++) {
    if (plan.phases[i].start <= t && t < phaseEnd(plan, i)) return i;
  }
  return null;
}

/** The next instant after t at which something happens: a charge, a phase boundary, the end. */
export function nextWakeAfter(plan: BillingPlan, t: Date): Date | null {
  let best: Date | null = null;
  const consider = (d: Date | null) => {
    if (d && d > t && d < FAR_FUTURE && (!best || d < best)) best = d;
  };
  for (let i = 0; i < plan.phases.length; i++) {
    const start = plan.phases[i].start;
    const end = phaseEnd(plan, i);
    if (start >= end) break;
    consider(start);
    consider(end);
    const cycle = cycleOf(plan, i);
    if (cycle && start <= t && t < end) consider(nextBillingDate(cycle.anchor, cycle.interval, cycle.count, t));
  }
  return best;
}

/**
 * The billing date of the first invoice (total above zero) strictly after t, however far
 * ahead; null when the plan bills nothing more (free or ended).
 */
export function nextBillingAfter(plan: BillingPlan, t: Date): Date | null {
  // Renewals up to t and the ones credit pays in full are skipped, so at most one charge per
  // phase is looked at before the answer.
  for (const c of chargeStream(plan, { from: new Date(t.getTime() + 1), invoicedOnly: true })) {
    if (c.at > t && invoiced(c)) return c.at;
  }
  return null;
}

export type SubscriptionStatus = 'scheduled' | 'active' | 'canceled' | 'ended';

/** `scheduled` before the first phase, `active` while a phase is in force, then `ended`; `canceled` from `canceledAt`. */
export function statusAt(plan: BillingPlan, t: Date): SubscriptionStatus {
  if (plan.canceledAt && plan.canceledAt <= t) return 'canceled';
  if (plan.phases.length === 0) return 'ended';
  if (t < plan.phases[0].start) return 'scheduled';
  return activePhaseIndex(plan, t) === null ? 'ended' : 'active';
}

/**
 * What a subscription's stored state is at t (the fields its workflow keeps): status and the phase
 * in force. They change only at phase boundaries; the next billing date, which moves with every
 * renewal, is computed when read (`nextBillingDateOf`).
 */
export function stateAt(plan: BillingPlan, t: Date): { status: SubscriptionStatus; active_phase_index: number | null } {
  return { status: statusAt(plan, t), active_phase_index: activePhaseIndex(plan, t) };
}
