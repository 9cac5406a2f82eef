/**
 * What a multi-phase subscription bills, and when: a pure plan computed from the phases,
 * the billing cycle anchor and the proration behaviour. The subscription workflow asks it
 * for every charge due up to "now" (so missed billing dates are caught up) and for the next
 * instant to wake at. Charges are keyed by phase and instant, so generating the invoice of
 * a charge is idempotent. Decimal math only.
 *
 * Rules (docs/DECISIONS.md, Subscriptions):
 * - Phase 1 bills from `billing_cycle_anchor` (else its start). Later phases keep that
 *   anchor, except under `always_invoice`, which starts a fresh cycle at the phase start.
 * - At a phase start that is not a billing date: `create_prorations` charges the fraction
 *   of the period up to the next billing date; `always_invoice` charges a full period;
 *   `none` charges nothing until the next billing date.
 * - At a later phase's start, `create_prorations` and `always_invoice` credit the unused
 *   part of what the previous phase billed for the time after the change.
 * - Renewals bill each full period in advance on its billing date.
 * - One-time items bill once, in full, at their phase's start.
 * - A negative net is carried as credit to the next charge; no invoice is negative, and a
 *   charge whose total is zero makes no invoice.
 */
import Decimal from 'decimal.js';
import { Money, toAmount } from './money';
import { Interval, billingDate, isBillingDate, nextBillingDate, periodContaining } from './calendar';

export type ProrationBehavior = 'create_prorations' | 'always_invoice' | 'none';

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
  end: Date | null;
  items: PlanItem[];
}

export interface BillingPlan {
  anchor: Date | null;
  behavior: ProrationBehavior;
  phases: PlanPhase[];
  canceledAt?: Date | null;
}

export interface ChargeLine {
  price_id: string;
  product_id: string;
  product_name: string;
  quantity: number;
  unit_amount: string;
  amount: string;
  description: string;
}

export interface Charge {
  /** `<phase index>:<ISO instant>`: unique per subscription, the invoice's idempotency key. */
  key: string;
  at: Date;
  phaseIndex: number;
  kind: 'start' | 'phase_change' | 'renewal';
  periodStart: Date;
  periodEnd: Date | null;
  lines: ChargeLine[];
  total: string;
  /** Credit still carried after this charge. */
  creditCarried: string;
}

const FAR_FUTURE = new Date(Date.UTC(9999, 0, 1));

interface Cycle {
  interval: Interval;
  count: number;
  anchor: Date;
}

interface Billed {
  items: PlanItem[];
  from: Date;
  end: Date;
  /** What was charged for [from, end) per unit of each item, by item index. */
  unitCharged: Decimal[];
}

function recurringItems(p: PlanPhase): PlanItem[] {
  return p.items.filter((i) => i.recurring);
}

function cycleOf(plan: BillingPlan, index: number): Cycle | null {
  const phase = plan.phases[index];
  const first = recurringItems(phase)[0];
  if (!first?.interval || !first.interval_count) return null;
  const subscriptionAnchor = plan.anchor ?? plan.phases[0].start;
  const anchor = index === 0 ? subscriptionAnchor : plan.behavior === 'always_invoice' ? phase.start : subscriptionAnchor;
  return { interval: first.interval, count: first.interval_count, anchor };
}

function phaseEnd(plan: BillingPlan, index: number): Date {
  const end = plan.phases[index].end ?? FAR_FUTURE;
  return plan.canceledAt && plan.canceledAt < end ? plan.canceledAt : end;
}

function line(item: PlanItem, unit: Decimal, description: string): ChargeLine {
  const unitAmount = toAmount(unit);
  return {
    price_id: item.price_id,
    product_id: item.product_id,
    product_name: item.product_name,
    quantity: item.quantity,
    unit_amount: unitAmount,
    amount: toAmount(new Money(unitAmount).times(item.quantity)),
    description,
  };
}

function fraction(from: Date, to: Date, periodStart: Date, periodEnd: Date): Decimal {
  return new Money(to.getTime() - from.getTime()).div(periodEnd.getTime() - periodStart.getTime());
}

/** Every charge of the plan with `at <= until`, oldest first, credit carried along. */
export function planCharges(plan: BillingPlan, until: Date): Charge[] {
  const charges: Charge[] = [];
  let credit = new Money(0);
  let billed: Billed | null = null;

  const emit = (c: Omit<Charge, 'total' | 'creditCarried' | 'key'>) => {
    const lines = [...c.lines];
    let net = lines.reduce((acc, l) => acc.plus(l.amount), new Money(0));
    if (credit.gt(0) && net.gt(0) && lines.length > 0) {
      const applied = Decimal.min(credit, net);
      const ref = lines.find((l) => new Money(l.amount).gt(0))!;
      lines.push({ ...ref, quantity: 1, unit_amount: toAmount(applied.neg()), amount: toAmount(applied.neg()), description: 'Credit carried from earlier changes' });
      credit = credit.minus(applied);
      net = net.minus(applied);
    }
    if (net.lt(0)) {
      credit = credit.plus(net.neg());
      net = new Money(0);
    }
    charges.push({ ...c, key: `${c.phaseIndex}:${c.at.toISOString()}`, lines, total: toAmount(net), creditCarried: toAmount(credit) });
  };

  for (let index = 0; index < plan.phases.length; index++) {
    const phase = plan.phases[index];
    const start = phase.start;
    const end = phaseEnd(plan, index);
    if (start > until || start >= end) break;
    const cycle = cycleOf(plan, index);
    const lines: ChargeLine[] = [];

    // Credit what the previous phase billed for the time after this change.
    if (index > 0 && plan.behavior !== 'none' && billed && billed.end > start) {
      const unused = fraction(start, billed.end, billed.from, billed.end);
      billed.items.forEach((item, i) => {
        const unit = billed!.unitCharged[i].times(unused);
        if (!unit.isZero()) lines.push(line(item, unit.neg(), 'Unused time before the phase change'));
      });
    }
    for (const item of phase.items.filter((i) => !i.recurring)) lines.push(line(item, new Money(item.unit_amount), 'One-time charge'));

    billed = null;
    let periodEnd: Date | null = null;
    if (cycle) {
      const items = recurringItems(phase);
      const containing = periodContaining(cycle.anchor, cycle.interval, cycle.count, start);
      periodEnd = nextBillingDate(cycle.anchor, cycle.interval, cycle.count, start);
      const onCycle = isBillingDate(cycle.anchor, cycle.interval, cycle.count, start);
      if (onCycle || plan.behavior === 'always_invoice') {
        const units = items.map((i) => new Money(i.unit_amount));
        items.forEach((item, i) => lines.push(line(item, units[i], 'Subscription period')));
        billed = { items, from: start, end: periodEnd, unitCharged: units };
      } else if (plan.behavior === 'create_prorations') {
        const f = fraction(start, periodEnd, containing.start, periodEnd);
        const units = items.map((i) => new Money(i.unit_amount).times(f));
        items.forEach((item, i) => lines.push(line(item, units[i], 'Prorated subscription period')));
        billed = { items, from: start, end: periodEnd, unitCharged: units.map((u) => new Money(toAmount(u))) };
      }
    }
    if (lines.length > 0) emit({ at: start, phaseIndex: index, kind: index === 0 ? 'start' : 'phase_change', periodStart: start, periodEnd, lines });

    // Renewals: each full period in advance, on its billing date, within the phase.
    if (cycle) {
      const items = recurringItems(phase);
      const units = items.map((i) => new Money(i.unit_amount));
      let n = periodContaining(cycle.anchor, cycle.interval, cycle.count, start).index + 1;
      for (;;) {
        const at = billingDate(cycle.anchor, cycle.interval, cycle.count, n);
        if (at >= end || at > until) break;
        const next = billingDate(cycle.anchor, cycle.interval, cycle.count, n + 1);
        emit({
          at,
          phaseIndex: index,
          kind: 'renewal',
          periodStart: at,
          periodEnd: next,
          lines: items.map((item, i) => line(item, units[i], 'Subscription period')),
        });
        billed = { items, from: at, end: next, unitCharged: units };
        n += 1;
      }
    }
  }
  return charges.filter((c) => new Money(c.total).gt(0) || c.lines.some((l) => !new Money(l.amount).isZero()));
}

/** Charges that make an invoice (total above zero). */
export function invoicedCharges(plan: BillingPlan, until: Date): Charge[] {
  return planCharges(plan, until).filter((c) => new Money(c.total).gt(0));
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

/** The next billing instant (a charge that makes an invoice) after t, looking up to two years past the later of t and the start. */
export function nextBillingAfter(plan: BillingPlan, t: Date): Date | null {
  const from = Math.max(t.getTime(), plan.phases[0]?.start.getTime() ?? t.getTime());
  const horizon = new Date(from + 2 * 366 * 86_400_000);
  const next = invoicedCharges(plan, horizon).find((c) => c.at > t);
  return next ? next.at : null;
}

export type SubscriptionStatus = 'scheduled' | 'active' | 'canceled' | 'ended';

export function statusAt(plan: BillingPlan, t: Date): SubscriptionStatus {
  if (plan.canceledAt && plan.canceledAt <= t) return 'canceled';
  if (t < plan.phases[0].start) return 'scheduled';
  return activePhaseIndex(plan, t) === null ? 'ended' : 'active';
}
