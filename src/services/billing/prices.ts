import { Price, PriceDoc } from '../../models/price';
import { Product } from '../../models/product';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { newId, ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { presentPrice } from '../../presenters/price';
import { recordEvent } from '../writes/events';
import { createListed, listScopePage, recountListSlots } from '../writes/listing';
import { removeSubscriptionsOfPrices } from './subscriptions';
import { removeLineItemsOfPrices } from './invoiceChanges';
import type { Dependencies } from '../../dependencies';
import { INTERVALS, MAX_INTERVAL_COUNT, Interval } from '../../billing/calendar';


export interface PriceInput {
  product_id: string;
  amount: number;
  recurring?: { interval?: unknown; interval_count?: unknown } | boolean | null;
  currency?: string;
}

function eventPayload(p: PriceDoc) {
  return { ...presentPrice(p), object: 'price' };
}

/** The spec's recurring rules, as field errors on `interval` / `interval_count`. */
export function parseRecurring(raw: PriceInput['recurring']): { interval: Interval; interval_count: number } | null {
  if (raw === undefined || raw === null || raw === false) return null;
  if (raw === true) throw ApiError.validation('interval', 'is required for recurring prices', 'recurring[interval]');
  const { interval, interval_count } = raw;
  if (interval === undefined || interval === null || interval === '') {
    throw ApiError.validation('interval', 'is required for recurring prices', 'recurring[interval]');
  }
  if (typeof interval !== 'string' || !(INTERVALS as readonly string[]).includes(interval)) {
    throw ApiError.validation('interval', 'must be one of: day, week, month, year', 'recurring[interval]');
  }
  if (interval_count === undefined || interval_count === null) {
    throw ApiError.validation('interval_count', 'is required for recurring prices', 'recurring[interval_count]');
  }
  if (typeof interval_count !== 'number' || !Number.isInteger(interval_count) || interval_count <= 0) {
    throw ApiError.validation('interval_count', 'must be greater than zero and integers only', 'recurring[interval_count]');
  }
  const max = MAX_INTERVAL_COUNT[interval as Interval];
  if (interval_count > max) {
    throw ApiError.validation('interval_count', `must be at most ${max} for interval ${interval} (three years)`, 'recurring[interval_count]');
  }
  return { interval: interval as Interval, interval_count };
}

export async function findPrice(scope: Scope, id: string, param = 'id'): Promise<PriceDoc> {
  const price = await findInScope<PriceDoc>(Price, scope, id);
  if (!price) throw ApiError.notFound(param === 'id' ? 'Price not found' : `Price not found: ${id}`, param);
  return price;
}

/** Under an Idempotency-Key, a retry after a request that died after its write finds that price (services/writes/creation.ts). */
export async function createPrice(scope: Scope, input: PriceInput, opts: CreateOptions = {}) {
  if (input.amount < 0) throw ApiError.validation('amount', 'must be greater than or equal to 0');
  const recurring = parseRecurring(input.recurring);
  const product = await findInScope(Product, scope, input.product_id);
  if (!product) throw ApiError.notFound('Product not found', 'product_id');
  const id = createdId(ID_PREFIX.price, opts);
  const price = (await earlierAttempt<PriceDoc>(Price, scope, id, opts)) ?? (
    await createListed(Price, scope, {
      _id: id,
      ...scopeFilter(scope),
      product_id: input.product_id,
      amount: input.amount,
      active: true,
      recurring,
      currency: input.currency ?? null,
    })
  ).toObject() as PriceDoc;
  await recordEvent(scope, 'price.created', eventPayload(price), { idempotencyKey: `price.created:${price._id}` });
  return presentPrice(price);
}

export async function getPrice(scope: Scope, id: string) {
  return presentPrice(await findPrice(scope, id));
}

export async function listPrices(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<PriceDoc>(Price, scope, page);
  return { prices: items.map(presentPrice), pagination };
}

export async function updatePrice(scope: Scope, id: string, input: { active?: boolean }) {
  const changes: Partial<PriceDoc> = {};
  if (input.active !== undefined) changes.active = input.active;
  await findPrice(scope, id);
  const price = await Price.findByIdAndUpdate(id, { $set: changes }, { returnDocument: 'after' }).lean<PriceDoc>();
  if (!price) throw ApiError.notFound('Price not found', 'id');
  await recordEvent(scope, 'price.updated', eventPayload(price));
  return presentPrice(price);
}

/** A price delete takes the subscriptions and the invoice line items that use it (spec cascade table). */
async function removePrices(deps: Dependencies, scope: Scope, prices: PriceDoc[]): Promise<void> {
  if (prices.length === 0) return;
  const ids = prices.map((p) => p._id);
  await removeSubscriptionsOfPrices(deps, scope, ids);
  await removeLineItemsOfPrices(deps, scope, ids);
  await Price.deleteMany({ _id: { $in: ids }, ...scopeFilter(scope) });
  await recountListSlots(Price, prices);
  for (const p of prices) await recordEvent(scope, 'price.deleted', eventPayload(p));
}

export async function deletePrice(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  await removePrices(deps, scope, [await findPrice(scope, id)]);
}

export async function deletePricesOfProduct(deps: Dependencies, scope: Scope, productId: string): Promise<void> {
  await removePrices(deps, scope, await Price.find({ product_id: productId, ...scopeFilter(scope) }).lean<PriceDoc[]>());
}
