/**
 * Subscriptions: validate and persist the phases, record the events, and start or signal
 * the subscription workflow, which owns billing from then on. The functions at the bottom
 * are the workflow's activities' use cases (load, generate an invoice, sync state).
 */
import { Subscription, SubscriptionDoc, PRORATION_BEHAVIORS, CanceledSubscription } from '../models/subscription';
import { Invoice, InvoiceDoc } from '../models/invoice';
import { Price, PriceDoc } from '../models/price';
import { Product, ProductDoc } from '../models/product';
import { Event, EventDoc } from '../models/event';
import { Scope, scopeFilter, scopeOfDoc, findInScope } from '../models/scope';
import { isDuplicateKey } from '../models/errors';
import { newId, derivedId, ID_PREFIX } from '../lib/ids';
import { ApiError } from '../lib/errors';
import { parseInstant } from '../lib/dates';
import { centsToAmount, parseAmount, toAmount } from '../billing/money';
import { dateWindowViolation, validatePhases } from '../billing/phases';
import { toBillingPlan, StoredSubscription } from '../billing/subscriptionPlan';
import { activePhaseIndex, nextBillingAfter, statusAt, ChargeLine } from '../billing/schedule';
import { dayAfter } from '../billing/dueDate';
import type { Interval } from '../billing/calendar';
import { presentSubscription, subscriptionEventPayload, phaseEventPayload } from '../presenters/subscription';
import { invoiceEventPayload } from '../presenters/invoice';
import { iso } from '../presenters/common';
import { recordEvent } from './events';
import { findCustomer } from './customers';
import { createListed, listScopePage, recountListSlots } from './listing';
import { watchDueDate } from './invoiceDueWatch';
import { PendingStart, recordWorkflowStart } from './workflowStarts';
import { getTemporal, hasTemporal } from '../temporal/context';
import { workflowIds } from '../temporal/workflowIds';
import { cancelSubscriptionSignal, subscriptionChangedSignal } from '../temporal/subscriptionDefinitions';
import type { subscriptionWorkflow } from '../workflows/subscription';
import { rollupsChanged } from './reportRollups';

type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number];

export interface PhaseInput {
  start_date: string;
  end_date?: string | null;
  items: { price_id: string; quantity?: number; overridden_price_amount?: string | null }[];
}

export interface SubscriptionInput {
  customer_id: string;
  proration_behavior?: ProrationBehavior;
  billing_cycle_anchor?: string | null;
  phases: PhaseInput[];
}

function phaseRuleError(message: string, rule: string): ApiError {
  return ApiError.invalid(`${message} (rule: ${rule})`, 'phases', { subscription_phases: [message] });
}

async function buildPhases(scope: Scope, phases: PhaseInput[]) {
  if (phases.length === 0) throw phaseRuleError('must have at least one phase', 'at_least_one_phase');
  const now = new Date();
  const built = [];
  for (const phase of phases) {
    const items = [];
    for (const item of phase.items) {
      const price = await findInScope<PriceDoc>(Price, scope, item.price_id);
      if (!price) throw ApiError.notFound(`Price not found: ${item.price_id}`, 'phases[][items][][price_id]');
      const product = await findInScope<ProductDoc>(Product, scope, price.product_id);
      let override: string | null = null;
      if (item.overridden_price_amount !== undefined && item.overridden_price_amount !== null) {
        const parsed = parseAmount(item.overridden_price_amount);
        if (!parsed) throw ApiError.invalid('Overridden price amount must be a non-negative decimal string with at most two decimals', 'phases[][items][][overridden_price_amount]');
        override = toAmount(parsed);
      }
      items.push({
        _id: newId(ID_PREFIX.subscriptionItem),
        price_id: price._id,
        product_id: price.product_id,
        product_name: product?.name ?? '',
        quantity: item.quantity ?? 1,
        unit_amount: centsToAmount(price.amount),
        overridden_price_amount: override,
        recurring: !!price.recurring,
        interval: price.recurring?.interval ?? null,
        interval_count: price.recurring?.interval_count ?? null,
      });
    }
    built.push({
      _id: newId(ID_PREFIX.subscriptionPhase),
      start_date: parseInstant(phase.start_date, 'phases[][start_date]'),
      end_date: phase.end_date ? parseInstant(phase.end_date, 'phases[][end_date]') : null,
      items,
      created_at: now,
      updated_at: now,
    });
  }
  const violation = validatePhases(
    built.map((p) => ({ start: p.start_date, end: p.end_date, items: p.items.map((i) => ({ recurring: i.recurring, interval: i.interval as Interval | null, interval_count: i.interval_count })) })),
  );
  if (violation) throw phaseRuleError(violation.message, violation.rule);
  return built;
}

function checkDateWindow(phases: { start_date: Date; end_date: Date | null }[], anchor: Date | null): void {
  const outside = dateWindowViolation(phases.map((p) => ({ start: p.start_date, end: p.end_date })), anchor, new Date());
  if (outside) throw ApiError.invalid(outside.message, outside.param);
}

export async function findSubscription(scope: Scope, id: string, param = 'id'): Promise<SubscriptionDoc> {
  const sub = await findInScope<SubscriptionDoc>(Subscription, scope, id);
  if (!sub) throw ApiError.notFound('Subscription not found', param);
  return sub;
}

/** The subscription's workflow start, recorded before the subscription is written (see workflowStarts). */
async function planWorkflow(sub: Pick<SubscriptionDoc, '_id' | 'account_id' | 'customer_id'>): Promise<PendingStart> {
  const indexed = hasTemporal() && !!getTemporal().searchAttributes;
  const args: Parameters<typeof subscriptionWorkflow> = [{ subscriptionId: sub._id, accountId: sub.account_id, customerId: sub.customer_id, indexed }];
  return recordWorkflowStart({
    workflowId: workflowIds.subscription(sub._id),
    workflowType: 'subscriptionWorkflow',
    args,
    resource: { collection: Subscription.collection.collectionName, id: sub._id },
  });
}

async function signal(subId: string, which: typeof cancelSubscriptionSignal | typeof subscriptionChangedSignal): Promise<void> {
  if (!hasTemporal()) return;
  try {
    await getTemporal().client.workflow.getHandle(workflowIds.subscription(subId)).signal(which);
  } catch {
    // The workflow already ended (ended or canceled subscription): nothing to tell it.
  }
}

export async function createSubscription(scope: Scope, input: SubscriptionInput) {
  await findCustomer(scope, input.customer_id, 'customer_id');
  const anchor = input.billing_cycle_anchor ? parseInstant(input.billing_cycle_anchor, 'billing_cycle_anchor') : null;
  const phases = await buildPhases(scope, input.phases);
  checkDateWindow(phases, anchor);
  const plan = toBillingPlan({ proration_behavior: input.proration_behavior ?? 'create_prorations', billing_cycle_anchor: anchor, phases });
  const now = new Date();
  const id = newId(ID_PREFIX.subscription);
  // Recorded before the subscription, so a crash between the two cannot lose its workflow.
  const workflow = await planWorkflow({ _id: id, account_id: scope.accountId, customer_id: input.customer_id });
  const sub = (
    await createListed(Subscription, scope, {
      _id: id,
      ...scopeFilter(scope),
      customer_id: input.customer_id,
      proration_behavior: input.proration_behavior ?? 'create_prorations',
      billing_cycle_anchor: anchor,
      // The workflow moves it to active when the first phase starts (and emits activated).
      status: 'scheduled',
      active_phase_index: null,
      next_billing_date: nextBillingAfter(plan, new Date(now.getTime() - 1)),
      phases,
    })
  ).toObject() as SubscriptionDoc;
  await rollupsChanged(scope, 'mrr');
  await recordEvent(scope, 'subscription.created', subscriptionEventPayload(sub));
  for (let i = 0; i < sub.phases.length; i++) await recordEvent(scope, 'subscription_phase.created', phaseEventPayload(sub, i, false));
  await workflow.start();
  return presentSubscription(sub);
}

export async function getSubscription(scope: Scope, id: string) {
  return presentSubscription(await findSubscription(scope, id));
}

export async function listSubscriptions(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<SubscriptionDoc>(Subscription, scope, page);
  return { subscriptions: items.map((s) => presentSubscription(s)), pagination };
}

export async function updateSubscription(scope: Scope, id: string, input: { proration_behavior?: ProrationBehavior; billing_cycle_anchor?: string | null }) {
  const before = await findSubscription(scope, id);
  if (before.status === 'canceled' || before.status === 'ended') throw ApiError.invalid(`A ${before.status} subscription cannot change`, 'status');
  const changes: Record<string, unknown> = {};
  if (input.proration_behavior !== undefined) changes.proration_behavior = input.proration_behavior;
  if (input.billing_cycle_anchor !== undefined) changes.billing_cycle_anchor = input.billing_cycle_anchor ? parseInstant(input.billing_cycle_anchor, 'billing_cycle_anchor') : null;
  if (changes.billing_cycle_anchor) checkDateWindow([], changes.billing_cycle_anchor as Date);
  const merged = { ...before, ...changes } as SubscriptionDoc;
  changes.next_billing_date = nextBillingAfter(toBillingPlan(merged), new Date());
  const sub = await Subscription.findByIdAndUpdate(id, { $set: changes }, { returnDocument: 'after' }).lean<SubscriptionDoc>();
  await signal(id, subscriptionChangedSignal);
  return presentSubscription(sub!);
}

/** DELETE: cancel (no further billing, `subscription.canceled`), then delete with its phases. */
export async function deleteSubscription(scope: Scope, id: string): Promise<void> {
  await findSubscription(scope, id);
  const canceled = await Subscription.findByIdAndUpdate(id, { $set: { status: 'canceled', canceled_at: new Date() } }, { returnDocument: 'after' }).lean<SubscriptionDoc>();
  await rollupsChanged(scope, 'mrr');
  await signal(id, cancelSubscriptionSignal);
  await recordEvent(scope, 'subscription.canceled', subscriptionEventPayload(canceled!), { idempotencyKey: `subscription.canceled:${id}` });
  // Revenue reports still need it (its MRR until canceled_at, and its churn).
  await CanceledSubscription.create({
    _id: id,
    account_id: canceled!.account_id,
    sandbox: canceled!.sandbox ?? null,
    customer_id: canceled!.customer_id,
    canceled_at: canceled!.canceled_at,
    phases: canceled!.phases,
    subscription_created_at: canceled!.created_at,
  }).catch((err) => {
    if (!isDuplicateKey(err)) throw err;
  });
  await Subscription.deleteOne({ _id: id });
  await recountListSlots(Subscription, [canceled!]);
  for (let i = 0; i < canceled!.phases.length; i++) await recordEvent(scope, 'subscription_phase.deleted', phaseEventPayload(canceled!, i, false));
}

/** Price deletes take the subscriptions that use them (spec cascade table). */
export async function removeSubscriptionsOfPrices(scope: Scope, priceIds: string[]): Promise<void> {
  const subs = await Subscription.find({ ...scopeFilter(scope), 'phases.items.price_id': { $in: priceIds } }).lean<SubscriptionDoc[]>();
  for (const s of subs) await deleteSubscription(scope, s._id);
}

export async function subscriptionExists(scope: Scope, id: string): Promise<boolean> {
  return (await findInScope(Subscription, scope, id)) !== null;
}

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

// ---- use cases of the subscription workflow's activities ----

export async function loadSubscriptionForBilling(id: string): Promise<StoredSubscription | null> {
  const sub = await Subscription.findById(id).lean<SubscriptionDoc>();
  if (!sub) return null;
  return {
    proration_behavior: sub.proration_behavior,
    billing_cycle_anchor: iso(sub.billing_cycle_anchor ?? null),
    canceled_at: iso(sub.canceled_at ?? null),
    phases: sub.phases.map((p) => ({ start_date: iso(p.start_date)!, end_date: iso(p.end_date ?? null), items: p.items.map((i) => ({ ...i })) })),
  };
}

export interface ChargeInput {
  key: string;
  at: string;
  kind: 'start' | 'phase_change' | 'renewal';
  periodStart: string;
  periodEnd: string | null;
  lines: ChargeLine[];
  total: string;
}

/**
 * Idempotent: the invoice is keyed by (subscription, charge); a retry finds it and re-records
 * nothing. `created` is false when it found the invoice (so a retry is not counted twice).
 */
export async function generateSubscriptionInvoice(
  subscriptionId: string,
  charge: ChargeInput,
  invoiceDueDays: number,
): Promise<{ invoiceId: string; created: boolean } | null> {
  const sub = await Subscription.findById(subscriptionId).lean<SubscriptionDoc>();
  if (!sub || sub.status === 'canceled') return null;
  const scope = scopeOfDoc(sub);
  const billingKey = `${subscriptionId}:${charge.key}`;
  // The invoice id derives from the billing key: lookups stay on `_id` (FerretDB's fast path)
  // and a second insert of the same charge is a duplicate key, not a second invoice.
  const invoiceId = derivedId(ID_PREFIX.invoice, billingKey);
  // Insert first: on Temporal's first try nothing exists yet, so a read would be wasted.
  let invoice: InvoiceDoc | null = null;
  let created = true;
  try {
    invoice = (
      await createListed(Invoice, scope, {
        _id: invoiceId,
        ...scopeFilter(scope),
        customer_id: sub.customer_id,
        subscription_id: subscriptionId,
        status: 'pending',
        due_date: dayAfter(new Date(charge.at), invoiceDueDays),
        total_amount: charge.total,
        line_items: charge.lines.map((l) => ({ _id: newId(ID_PREFIX.lineItem), ...l })),
        billing_key: billingKey,
        period_start: new Date(charge.periodStart),
        period_end: charge.periodEnd ? new Date(charge.periodEnd) : null,
      })
    ).toObject() as InvoiceDoc;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    created = false;
    invoice = await Invoice.findById(invoiceId).lean<InvoiceDoc>();
  }
  if (!invoice) return null;
  // Also on a retry (the first attempt may have died before marking).
  await rollupsChanged(scope, 'receivables');
  await recordEvent(scope, 'invoice.created', invoiceEventPayload(invoice), { idempotencyKey: `invoice.created:${billingKey}` });
  if (charge.kind === 'renewal') {
    await recordEvent(
      scope,
      'subscription.renewed',
      { ...subscriptionEventPayload(sub), invoice_id: invoice._id, amount: invoice.total_amount, period_start: charge.periodStart },
      { idempotencyKey: `subscription.renewed:${billingKey}` },
    );
  }
  if (invoice.status === 'pending') await watchDueDate(invoice);
  return { invoiceId: invoice._id, created };
}

/** Moves status and the active phase to what the plan says at `now`, with keyed events. */
export async function syncSubscriptionState(subscriptionId: string, nowIso: string): Promise<string> {
  const sub = await Subscription.findById(subscriptionId).lean<SubscriptionDoc>();
  if (!sub) return 'deleted';
  if (sub.status === 'canceled') return 'canceled';
  const scope = scopeOfDoc(sub);
  const now = new Date(nowIso);
  const plan = toBillingPlan(sub);
  const status = statusAt(plan, now);
  const active = activePhaseIndex(plan, now);
  const before = sub.active_phase_index ?? null;
  const next = status === 'ended' ? null : nextBillingAfter(plan, now);
  if (status === sub.status && active === before && (next?.getTime() ?? null) === (sub.next_billing_date ? new Date(sub.next_billing_date).getTime() : null)) return status;
  const updated = await Subscription.findOneAndUpdate(
    { _id: subscriptionId, status: { $ne: 'canceled' } },
    { $set: { status, active_phase_index: active, next_billing_date: next } },
    { returnDocument: 'after' },
  ).lean<SubscriptionDoc>();
  if (!updated) return 'canceled';
  if (before !== null && before !== active) {
    await recordEvent(scope, 'subscription_phase.updated', phaseEventPayload(updated, before, false), { idempotencyKey: `phase.ended:${updated.phases[before]._id}` });
  }
  if (active !== null && active !== before) {
    await recordEvent(scope, 'subscription_phase.updated', phaseEventPayload(updated, active, true), { idempotencyKey: `phase.started:${updated.phases[active]._id}` });
  }
  if (status === 'active' && sub.status === 'scheduled') {
    await recordEvent(scope, 'subscription.activated', subscriptionEventPayload(updated), { idempotencyKey: `subscription.activated:${subscriptionId}` });
  }
  return status;
}
