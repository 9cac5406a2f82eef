import { ProductDoc } from '../models/product';
import { iso } from './common';

export function presentProduct(p: ProductDoc) {
  return { id: p._id, name: p.name, created_at: iso(p.created_at), updated_at: iso(p.updated_at) };
}
