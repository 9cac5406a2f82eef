import { SubscriptionDoc, SubscriptionPhaseDoc } from '../models/subscription';
import { effectivePrice, nextBillingDateOf } from '../billing/subscriptionPlan';
import { multiplyAmount, sumAmounts } from '../billing/money';
import { iso } from './common';

function presentPhase(p: SubscriptionPhaseDoc, isActive: boolean) {
  return {
    id: p._id,
    start_date: iso(p.start_date),
    end_date: iso(p.end_date ?? null),
    is_active: isActive,
    items: p.items.map((i) => ({
      id: i._id,
      price_id: i.price_id,
      product_id: i.product_id,
      product_name: i.product_name,
      quantity: i.quantity,
      unit_amount: i.unit_amount,
      overridden_price_amount: i.overridden_price_amount ?? null,
      effective_price: effectivePrice(i),
      recurring: i.recurring,
      interval: i.interval ?? null,
      interval_count: i.interval_count ?? null,
    })),
  };
}

/**
 * The active phase is the subscription workflow's (it keeps it in the document as its clock
 * moves). The next billing date is the plan's as of `now`: it moves with every renewal, so it is
 * computed here rather than written by each one (docs/adr/0307-bounded-billing-plan.md).
 */
export function presentSubscription(s: SubscriptionDoc, now = new Date()) {
  const live = s.status !== 'canceled' && s.status !== 'ended';
  const active = live ? (s.active_phase_index ?? null) : null;
  const shown = s.phases[active ?? 0];
  const next = nextBillingDateOf(s, now);
  const first = s.phases[0];
  const last = s.phases[s.phases.length - 1];
  return {
    id: s._id,
    customer_id: s.customer_id,
    status: s.status,
    proration_behavior: s.proration_behavior,
    billing_cycle_anchor: iso(s.billing_cycle_anchor ?? first?.start_date),
    start_date: iso(first?.start_date),
    end_date: iso(last?.end_date ?? null),
    next_billing_date: iso(next),
    total_amount: sumAmounts((shown?.items ?? []).filter((i) => i.recurring).map((i) => multiplyAmount(effectivePrice(i), i.quantity))),
    canceled_at: iso(s.canceled_at ?? null),
    phases: s.phases.map((p, i) => presentPhase(p as SubscriptionPhaseDoc, i === active)),
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  };
}

export function subscriptionEventPayload(s: SubscriptionDoc, now = new Date()) {
  return { ...presentSubscription(s, now), object: 'subscription' };
}

/** The spec's `subscription_phase.*` payload (item ids are positions, integers). */
export function phaseEventPayload(s: SubscriptionDoc, index: number, isActive: boolean) {
  const p = s.phases[index] as SubscriptionPhaseDoc;
  return {
    id: p._id,
    object: 'subscription_phase',
    subscription_id: s._id,
    start_date: iso(p.start_date),
    end_date: iso(p.end_date ?? null),
    is_active: isActive,
    items: p.items.map((i, n) => ({ id: n + 1, price_id: i.price_id, quantity: i.quantity, overridden_price_amount: i.overridden_price_amount ?? null })),
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}
