import { PriceDoc } from '../models/price';
import { iso } from './common';

export function presentPrice(p: PriceDoc) {
  return {
    id: p._id,
    amount: p.amount,
    product_id: p.product_id,
    active: p.active,
    recurring: p.recurring ? { interval: p.recurring.interval, interval_count: p.recurring.interval_count } : null,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}
