import type { Model } from 'mongoose';

/**
 * `{field: {$in: values}, ...rest}` as one equality query per distinct value, run together.
 * FerretDB pushes an equality down to its index but never `$in`, which it answers by decoding
 * the whole collection; on MongoDB both are index lookups. Meant for short lists (a page).
 */
export async function findIn<T>(model: Model<any>, field: string, values: readonly unknown[], rest: Record<string, unknown> = {}): Promise<T[]> {
  const distinct = [...new Set(values)];
  const found = await Promise.all(distinct.map((v) => model.find({ ...rest, [field]: v }).lean<T[]>()));
  return found.flat();
}
