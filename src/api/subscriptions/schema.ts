import { compile, s } from '../validation';
import { PRORATION_BEHAVIORS } from '../../models/subscription';
import type { SubscriptionInput } from '../../services/billing/subscriptions';

const instant = { type: 'string', maxLength: 40 };

export const createSubscriptionBody = compile<SubscriptionInput>({
  type: 'object',
  required: ['customer_id', 'phases'],
  properties: {
    customer_id: s.id,
    proration_behavior: { type: 'string', enum: PRORATION_BEHAVIORS, default: 'create_prorations' },
    billing_cycle_anchor: { type: ['string', 'null'], maxLength: 40 },
    phases: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['start_date', 'items'],
        properties: {
          start_date: instant,
          end_date: { type: ['string', 'null'], maxLength: 40 },
          items: {
            type: 'array',
            maxItems: 50,
            items: {
              type: 'object',
              required: ['price_id'],
              properties: {
                price_id: s.id,
                quantity: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
                overridden_price_amount: { type: ['string', 'null'], maxLength: 20 },
              },
            },
          },
        },
      },
    },
  },
});

/** Only these two can change after creation; phases are fixed. */
export const updateSubscriptionBody = compile<{ proration_behavior?: (typeof PRORATION_BEHAVIORS)[number]; billing_cycle_anchor?: string | null }>({
  type: 'object',
  properties: {
    proration_behavior: { type: 'string', enum: PRORATION_BEHAVIORS },
    billing_cycle_anchor: { type: ['string', 'null'], maxLength: 40 },
    customer_id: { not: {} },
    phases: { not: {} },
  },
});
