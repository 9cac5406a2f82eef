/** Turns a stored subscription into its billing plan (dates as Date, effective prices). Pure. */
import { nextBillingAfter, type BillingPlan, type PlanItem, type ProrationBehavior } from './schedule';
import type { Interval } from './calendar';

export interface StoredItem {
  price_id: string;
  product_id: string;
  product_name: string;
  quantity: number;
  unit_amount: string;
  overridden_price_amount?: string | null;
  recurring: boolean;
  interval?: string | null;
  interval_count?: number | null;
}

export interface StoredSubscription {
  proration_behavior: string;
  billing_cycle_anchor?: Date | string | null;
  canceled_at?: Date | string | null;
  phases: { start_date: Date | string; end_date?: Date | string | null; items: StoredItem[] }[];
}

export function effectivePrice(item: StoredItem): string {
  return item.overridden_price_amount ?? item.unit_amount;
}

const date = (d: Date | string | null | undefined) => (d === null || d === undefined ? null : new Date(d));

export function toBillingPlan(s: StoredSubscription): BillingPlan {
  return {
    anchor: date(s.billing_cycle_anchor),
    behavior: s.proration_behavior as ProrationBehavior,
    canceledAt: date(s.canceled_at),
    phases: s.phases.map((p) => ({
      start: new Date(p.start_date),
      end: date(p.end_date),
      items: p.items.map(
        (i): PlanItem => ({
          price_id: i.price_id,
          product_id: i.product_id,
          product_name: i.product_name,
          quantity: i.quantity,
          unit_amount: effectivePrice(i),
          recurring: i.recurring,
          interval: (i.interval ?? null) as Interval | null,
          interval_count: i.interval_count ?? null,
        }),
      ),
    })),
  };
}

/**
 * A stored subscription's next billing date as read at `now`: the plan's first billing date from
 * `now` on, null once canceled or ended. Computed, never stored, so a renewal does not write the
 * subscription (docs/adr/0307-bounded-billing-plan.md); O(phases).
 */
export function nextBillingDateOf(s: StoredSubscription & { status: string }, now: Date): Date | null {
  if (s.status === 'canceled' || s.status === 'ended') return null;
  return nextBillingAfter(toBillingPlan(s), new Date(now.getTime() - 1));
}
