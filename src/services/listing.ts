import { Model } from 'mongoose';
import { pageWindow, pagination, Pagination } from '../lib/pagination';

/** One page of a scoped list, newest first (created_at desc, then id desc) unless told otherwise. */
export async function listPage<T>(
  model: Model<any>,
  filter: Record<string, unknown>,
  page: number,
  sort: Record<string, 1 | -1> = { created_at: -1, _id: -1 },
): Promise<{ items: T[]; pagination: Pagination }> {
  const { skip, limit } = pageWindow(page);
  const [items, count] = await Promise.all([
    model.find(filter).sort(sort).skip(skip).limit(limit).lean<T[]>(),
    model.countDocuments(filter),
  ]);
  return { items, pagination: pagination(page, count) };
}
