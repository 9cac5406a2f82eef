import { Schema, model, InferSchemaType } from 'mongoose';
import { scopedFields, timestamps } from './scope';
import { listSlotFields, indexListSlots } from './listCounter';

export const PRORATION_BEHAVIORS = ['create_prorations', 'always_invoice', 'none'] as const;
export const SUBSCRIPTION_STATUSES = ['scheduled', 'active', 'canceled', 'ended'] as const;

const itemSchema = new Schema(
  {
    _id: { type: String, required: true },
    price_id: { type: String, required: true },
    product_id: { type: String, required: true },
    product_name: { type: String, required: true },
    quantity: { type: Number, required: true },
    /** The price's standard unit amount (decimal string). */
    unit_amount: { type: String, required: true },
    overridden_price_amount: { type: String, default: null },
    recurring: { type: Boolean, required: true },
    interval: { type: String, default: null },
    interval_count: { type: Number, default: null },
  },
  { versionKey: false },
);

const phaseSchema = new Schema(
  {
    _id: { type: String, required: true },
    start_date: { type: Date, required: true },
    end_date: { type: Date, default: null },
    items: { type: [itemSchema], default: [] },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { versionKey: false },
);

const subscriptionSchema = new Schema(
  {
    ...scopedFields,
    ...listSlotFields,
    customer_id: { type: String, required: true },
    proration_behavior: { type: String, enum: PRORATION_BEHAVIORS, required: true },
    billing_cycle_anchor: { type: Date, default: null },
    status: { type: String, enum: SUBSCRIPTION_STATUSES, required: true },
    canceled_at: { type: Date, default: null },
    /**
     * Kept by the subscription workflow (the single owner of billing state), written when a phase
     * starts or ends. The next billing date is not stored: it is computed when read (nextBillingDateOf).
     */
    active_phase_index: { type: Number, default: null },
    /** Stepped by each change (the API's and the workflow's state), one writer at a time (services/writes/heldWrites.ts). */
    write_version: { type: Number, default: 0 },
    phases: { type: [phaseSchema], default: [] },
  },
  { timestamps, versionKey: false },
);
subscriptionSchema.index({ account_id: 1, sandbox: 1, created_at: -1, _id: -1 });
// The buckets of its list (src/services/writes/listing.ts).
indexListSlots(subscriptionSchema);
subscriptionSchema.index({ customer_id: 1 });
subscriptionSchema.index({ 'phases.items.price_id': 1 });

export type SubscriptionDoc = InferSchemaType<typeof subscriptionSchema> & { _id: string; created_at: Date; updated_at: Date };
export type SubscriptionPhaseDoc = SubscriptionDoc['phases'][number] & { _id: string };
export const Subscription = model('Subscription', subscriptionSchema, 'subscriptions');

/**
 * A canceled subscription as it was when DELETE removed it, kept for revenue reports (MRR and its
 * churn need every subscription that ever billed; events are purged after 30 days). `_id` is the
 * subscription's id, so a retried delete keeps one copy.
 */
const canceledSubscriptionSchema = new Schema(
  {
    ...scopedFields,
    customer_id: { type: String, required: true },
    canceled_at: { type: Date, default: null },
    phases: { type: [phaseSchema], default: [] },
    subscription_created_at: { type: Date, required: true },
  },
  { timestamps, versionKey: false },
);
canceledSubscriptionSchema.index({ account_id: 1, sandbox: 1 });
export type CanceledSubscriptionDoc = InferSchemaType<typeof canceledSubscriptionSchema> & { _id: string };
export const CanceledSubscription = model('CanceledSubscription', canceledSubscriptionSchema, 'canceled_subscriptions');
