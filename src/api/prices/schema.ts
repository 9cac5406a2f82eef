import { compile, s } from '../validation';
import type { PriceInput } from '../../services/billing/prices';

export const createPriceBody = compile<PriceInput>({
  type: 'object',
  required: ['product_id', 'amount'],
  properties: {
    product_id: s.id,
    amount: { type: 'integer', maximum: 1e13 },
    // Checked by the service so the spec's field messages (interval, interval_count) come out.
    recurring: { type: ['object', 'boolean', 'null'] },
    currency: { type: 'string', maxLength: 10 },
  },
});

/** Only `active` can change after creation; naming another price field is an error, not a no-op. */
export const updatePriceBody = compile<{ active?: boolean }>({
  type: 'object',
  properties: {
    active: { type: 'boolean' },
    amount: { not: {} },
    product_id: { not: {} },
    recurring: { not: {} },
  },
});
