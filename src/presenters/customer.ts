import { CustomerDoc } from '../models/customer';
import { iso } from './common';

export function presentCustomer(c: CustomerDoc) {
  return {
    id: c._id,
    email: c.email,
    first_name: c.first_name ?? null,
    last_name: c.last_name ?? null,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}
