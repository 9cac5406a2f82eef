/**
 * Subscriptions: validate and persist the phases, record the events, and start or signal
 * the subscription workflow, which owns billing from then on. The functions at the bottom
 * are the workflow's activities' use cases (load, sync state); its invoices are inserted by
 * invoices.ts (generateSubscriptionInvoice).
 */
import { Subscription, SubscriptionDoc, PRORATION_BEHAVIORS, CanceledSubscription } from '../../models/subscription';
import { Price, PriceDoc } from '../../models/price';
import { Product, ProductDoc } from '../../models/product';
import { Scope, scopeFilter, scopeOfDoc, findInScope } from '../../models/scope';
import { isDuplicateKey } from '../../models/errors';
import { newId, ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { heldForApi, writeHeld } from '../writes/heldWrites';
import { parseInstant } from '../../lib/dates';
import { centsToAmount, parseAmount, toAmount } from '../../billing/money';
import { dateWindowViolation, validatePhases } from '../../billing/phases';
import { toBillingPlan, StoredSubscription } from '../../billing/subscriptionPlan';
import { stateAt } from '../../billing/schedule';
import type { Interval } from '../../billing/calendar';
import { presentSubscription, subscriptionEventPayload, phaseEventPayload } from '../../presenters/subscription';
import { iso } from '../../presenters/common';
import { EventToRecord, recordEvent, recordEvents } from '../writes/events';
import { findCustomer } from './customers';
import { createListed, listScopePage, recountListSlots } from '../writes/listing';
import type { Dependencies } from '../../dependencies';
import { rollupsChanged } from '../reports/reportRollups';

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

/**
 * Under an Idempotency-Key (services/writes/creation.ts), a retry after a request that died after its
 * write finds that subscription and writes the events the first attempt may not have; its
 * workflow's start was recorded before the write, so the outbox's sweeper starts it either way.
 */
export async function createSubscription(deps: Dependencies, scope: Scope, input: SubscriptionInput, opts: CreateOptions = {}) {
  const id = createdId(ID_PREFIX.subscription, opts);
  const earlier = await earlierAttempt<SubscriptionDoc>(Subscription, scope, id, opts);
  if (earlier) return announceCreatedSubscription(deps, scope, earlier);
  await findCustomer(scope, input.customer_id, 'customer_id');
  const anchor = input.billing_cycle_anchor ? parseInstant(input.billing_cycle_anchor, 'billing_cycle_anchor') : null;
  const phases = await buildPhases(scope, input.phases);
  checkDateWindow(phases, anchor);
  // Recorded before the subscription, so a crash between the two cannot lose its workflow.
  const workflow = await deps.workflows.subscription.plan({ _id: id, account_id: scope.accountId, customer_id: input.customer_id });
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
      phases,
    })
  ).toObject() as SubscriptionDoc;
  await announceCreatedSubscription(deps, scope, sub);
  await workflow.start();
  return presentSubscription(sub);
}

/** After a new subscription's write (again, on a retry that found it): its report mark and its events, once each. */
async function announceCreatedSubscription(deps: Dependencies, scope: Scope, sub: SubscriptionDoc) {
  await rollupsChanged(deps, scope, 'mrr');
  await recordEvent(scope, 'subscription.created', subscriptionEventPayload(sub), { idempotencyKey: `subscription.created:${sub._id}` });
  for (let i = 0; i < sub.phases.length; i++) {
    await recordEvent(scope, 'subscription_phase.created', phaseEventPayload(sub, i, false), { idempotencyKey: `subscription_phase.created:${sub._id}:${i}` });
  }
  return presentSubscription(sub);
}

export async function getSubscription(scope: Scope, id: string) {
  return presentSubscription(await findSubscription(scope, id));
}

export async function listSubscriptions(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<SubscriptionDoc>(Subscription, scope, page);
  return { subscriptions: items.map((s) => presentSubscription(s)), pagination };
}

export async function updateSubscription(deps: Dependencies, scope: Scope, id: string, input: { proration_behavior?: ProrationBehavior; billing_cycle_anchor?: string | null }) {
  const seen = await findSubscription(scope, id);
  const changes: Record<string, unknown> = {};
  if (input.proration_behavior !== undefined) changes.proration_behavior = input.proration_behavior;
  if (input.billing_cycle_anchor !== undefined) changes.billing_cycle_anchor = input.billing_cycle_anchor ? parseInstant(input.billing_cycle_anchor, 'billing_cycle_anchor') : null;
  if (changes.billing_cycle_anchor) checkDateWindow([], changes.billing_cycle_anchor as Date);
  // Held: the subscription's workflow writes its state to the same document (services/writes/heldWrites.ts).
  const sub = await writeSubscription(id, seen, (before) => {
    if (before.status === 'canceled' || before.status === 'ended') throw ApiError.invalid(`A ${before.status} subscription cannot change`, 'status');
    return changes;
  });
  await deps.workflows.subscription.changed(id);
  return presentSubscription(sub);
}

/** An API change to a subscription as its only writer at that moment; 404 once gone, 409 while held for long. */
async function writeSubscription(id: string, seen: SubscriptionDoc, plan: (sub: SubscriptionDoc) => Record<string, unknown> | null): Promise<SubscriptionDoc> {
  return heldForApi(await writeHeld<SubscriptionDoc>(Subscription, id, plan, { seen, seenWhole: true }), 'Subscription', 'id');
}

/** DELETE: cancel (no further billing, `subscription.canceled`), then delete with its phases. */
export async function deleteSubscription(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  const seen = await findSubscription(scope, id);
  // A retried DELETE keeps the first cancellation's time.
  const canceled = await writeSubscription(id, seen, (sub) => (sub.status === 'canceled' && sub.canceled_at ? null : { status: 'canceled', canceled_at: new Date() }));
  await rollupsChanged(deps, scope, 'mrr');
  await deps.workflows.subscription.cancel(id);
  await recordEvent(scope, 'subscription.canceled', subscriptionEventPayload(canceled), { idempotencyKey: `subscription.canceled:${id}` });
  // Revenue reports still need it (its MRR until canceled_at, and its churn).
  await CanceledSubscription.create({
    _id: id,
    account_id: canceled.account_id,
    sandbox: canceled.sandbox ?? null,
    customer_id: canceled.customer_id,
    canceled_at: canceled.canceled_at,
    phases: canceled.phases,
    subscription_created_at: canceled.created_at,
  }).catch((err) => {
    if (!isDuplicateKey(err)) throw err;
  });
  await Subscription.deleteOne({ _id: id });
  await recountListSlots(Subscription, [canceled]);
  for (let i = 0; i < canceled.phases.length; i++) await recordEvent(scope, 'subscription_phase.deleted', phaseEventPayload(canceled, i, false));
}

/** Price deletes take the subscriptions that use them (spec cascade table). */
export async function removeSubscriptionsOfPrices(deps: Dependencies, scope: Scope, priceIds: string[]): Promise<void> {
  const subs = await Subscription.find({ ...scopeFilter(scope), 'phases.items.price_id': { $in: priceIds } }).lean<SubscriptionDoc[]>();
  for (const s of subs) await deleteSubscription(deps, scope, s._id);
}

// ---- use cases of the subscription workflow's activities ----

/** The subscription as stored (null once deleted): what a wake-up's steps start from. */
export function readSubscription(id: string): Promise<SubscriptionDoc | null> {
  return Subscription.findById(id).lean<SubscriptionDoc>();
}

export async function loadSubscriptionForBilling(id: string): Promise<StoredSubscription | null> {
  const sub = await readSubscription(id);
  if (!sub) return null;
  return {
    proration_behavior: sub.proration_behavior,
    billing_cycle_anchor: iso(sub.billing_cycle_anchor ?? null),
    canceled_at: iso(sub.canceled_at ?? null),
    phases: sub.phases.map((p) => ({ start_date: iso(p.start_date)!, end_date: iso(p.end_date ?? null), items: p.items.map((i) => ({ ...i })) })),
  };
}

/** A subscription moving to its state as of an instant: the state, and the events of the move, in order. */
export interface SubscriptionStateChange {
  state: ReturnType<typeof stateAt>;
  events: EventToRecord[];
  /** The `updated_at` the events show, which the write then stores. */
  writtenAt: Date;
}

/** What `sub` moves to as of `now` (status, active phase, next billing date); null when it already shows that, or is canceled. */
export function subscriptionStateChange(sub: SubscriptionDoc, now: Date): SubscriptionStateChange | null {
  if (sub.status === 'canceled') return null;
  const state = stateAt(toBillingPlan(sub), now);
  // Only phase boundaries move it: an ordinary renewal writes nothing to the subscription.
  if (state.status === sub.status && state.active_phase_index === (sub.active_phase_index ?? null)) return null;
  const writtenAt = new Date();
  const moved = { ...sub, ...state, updated_at: writtenAt } as SubscriptionDoc;
  const wasActive = sub.active_phase_index ?? null;
  const isActive = state.active_phase_index ?? null;
  const events: EventToRecord[] = [];
  if (wasActive !== null && wasActive !== isActive) {
    events.push({ event: 'subscription_phase.updated', payload: phaseEventPayload(moved, wasActive, false), idempotencyKey: `phase.ended:${sub.phases[wasActive]._id}` });
  }
  if (isActive !== null && isActive !== wasActive) {
    events.push({ event: 'subscription_phase.updated', payload: phaseEventPayload(moved, isActive, true), idempotencyKey: `phase.started:${sub.phases[isActive]._id}` });
  }
  if (state.status === 'active' && sub.status === 'scheduled') {
    events.push({ event: 'subscription.activated', payload: subscriptionEventPayload(moved, now), idempotencyKey: `subscription.activated:${sub._id}` });
  }
  return { state, events, writtenAt };
}

/**
 * Writes the state as of `now` to the subscription `sub` was read from. Held
 * (services/writes/heldWrites.ts): a PATCH or a cancellation landing at the same moment is not
 * written back over; a stale `sub` is read again and the state computed from that.
 */
export async function writeSubscriptionState(sub: SubscriptionDoc, now: Date, writtenAt = new Date()): Promise<string> {
  const plan = (current: SubscriptionDoc) => (current.status === 'canceled' ? null : { ...stateAt(toBillingPlan(current), now), updated_at: writtenAt });
  const held = await writeHeld<SubscriptionDoc>(Subscription, sub._id, plan, { seen: sub, seenWhole: true });
  if (held.result === 'busy') throw new Error(`subscription ${sub._id} is held by other writers; retrying`);
  if (held.result === 'missing') return 'deleted';
  return held.result === 'written' ? held.after.status : held.before.status;
}

/**
 * Moves status and the active phase to what the plan says at `now`, with keyed events. The
 * events are recorded before the write: a retry after a crash between the two finds the same
 * move and records them once (after the write, a retry would find nothing to move and the events
 * would be lost).
 */
export async function syncSubscriptionState(subscriptionId: string, nowIso: string): Promise<string> {
  const sub = await readSubscription(subscriptionId);
  if (!sub) return 'deleted';
  const change = subscriptionStateChange(sub, new Date(nowIso));
  if (!change) return sub.status;
  await recordEvents(scopeOfDoc(sub), change.events);
  return writeSubscriptionState(sub, new Date(nowIso), change.writtenAt);
}
