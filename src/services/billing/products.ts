import { Product, ProductDoc } from '../../models/product';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { newId, ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { presentProduct } from '../../presenters/product';
import { recordEvent } from '../writes/events';
import { requireNonBlank } from '../writes/validate';
import { createListed, listScopePage, recountListSlots } from '../writes/listing';
import { deletePricesOfProduct } from './prices';
import type { Dependencies } from '../../dependencies';

function eventPayload(p: ProductDoc) {
  return { ...presentProduct(p), object: 'product' };
}

export async function findProduct(scope: Scope, id: string, param = 'id'): Promise<ProductDoc> {
  const product = await findInScope<ProductDoc>(Product, scope, id);
  if (!product) throw ApiError.notFound('Product not found', param);
  return product;
}

/** Under an Idempotency-Key, a retry after a request that died after its write finds that product (services/writes/creation.ts). */
export async function createProduct(scope: Scope, input: { name: string }, opts: CreateOptions = {}) {
  const name = requireNonBlank('name', input.name);
  const id = createdId(ID_PREFIX.product, opts);
  const product = (await earlierAttempt<ProductDoc>(Product, scope, id, opts)) ?? ((await createListed(Product, scope, { _id: id, ...scopeFilter(scope), name })).toObject() as ProductDoc);
  await recordEvent(scope, 'product.created', eventPayload(product), { idempotencyKey: `product.created:${product._id}` });
  return presentProduct(product);
}

export async function getProduct(scope: Scope, id: string) {
  return presentProduct(await findProduct(scope, id));
}

export async function listProducts(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<ProductDoc>(Product, scope, page);
  return { products: items.map(presentProduct), pagination };
}

export async function updateProduct(scope: Scope, id: string, input: { name?: string }) {
  const changes: Partial<ProductDoc> = {};
  if (input.name !== undefined) changes.name = requireNonBlank('name', input.name);
  await findProduct(scope, id);
  const product = await Product.findByIdAndUpdate(id, { $set: changes }, { returnDocument: 'after' }).lean<ProductDoc>();
  if (!product) throw ApiError.notFound('Product not found', 'id');
  await recordEvent(scope, 'product.updated', eventPayload(product));
  return presentProduct(product);
}

/** Deleting a product deletes its prices (each with its own price.deleted event). */
export async function deleteProduct(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  await findProduct(scope, id);
  const product = await Product.findByIdAndDelete(id).lean<ProductDoc>();
  if (!product) throw ApiError.notFound('Product not found', 'id');
  await recountListSlots(Product, [product]);
  await deletePricesOfProduct(deps, scope, id);
  await recordEvent(scope, 'product.deleted', eventPayload(product));
}
