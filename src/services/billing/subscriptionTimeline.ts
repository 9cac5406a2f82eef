/**
 * The finance view of a subscription (`GET /v1/subscriptions/:id/timeline`): a read model built
 * from the stored events, apart from the subscription's writes in subscriptions.ts.
 */
import { Event, EventDoc } from '../../models/event';
import { Scope, scopeFilter } from '../../models/scope';
import { iso } from '../../presenters/common';
import { findSubscription } from './subscriptions';

const TIMELINE_STEPS: Record<string, string> = {
  'subscription.created': 'created',
  'subscription.activated': 'activated',
  'subscription.renewed': 'renewed',
  'subscription.canceled': 'canceled',
  'invoice.created': 'invoice_generated',
  'invoice.paid': 'invoice_paid',
  'invoice.overdue': 'invoice_overdue',
};

/** The finance view: every lifecycle step, oldest first, from the stored events. */
export async function subscriptionTimeline(scope: Scope, id: string) {
  await findSubscription(scope, id);
  return { subscription_id: id, timeline: await timelineSteps(scope, id) };
}

/** The steps alone, also for a subscription deleted since (the finance console shows those). */
export async function timelineSteps(scope: Scope, id: string) {
  const events = await Event.find({ ...scopeFilter(scope), $or: [{ 'payload.id': id }, { 'payload.subscription_id': id }] })
    .sort({ timestamp: 1, _id: 1 })
    .lean<EventDoc[]>();
  const steps = [];
  for (const e of events) {
    const p = e.payload as Record<string, any>;
    let step = TIMELINE_STEPS[e.event];
    if (e.event === 'subscription_phase.updated') step = p.is_active ? 'phase_started' : 'phase_ended';
    if (e.event === 'subscription_phase.created') step = 'phase_scheduled';
    if (e.event === 'subscription_phase.deleted') step = 'phase_deleted';
    if (!step) continue;
    steps.push({
      at: iso(e.timestamp),
      step,
      event: e.event,
      event_id: e._id,
      ...(e.event.startsWith('invoice.') ? { invoice_id: p.id, amount: p.total_amount, status: p.status, period_start: p.period_start ?? null } : {}),
      ...(e.event.startsWith('subscription_phase.') ? { phase_id: p.id, start_date: p.start_date, end_date: p.end_date } : {}),
      ...(e.event === 'subscription.renewed' ? { invoice_id: p.invoice_id ?? null, amount: p.amount ?? null } : {}),
    });
  }
  return steps;
}
