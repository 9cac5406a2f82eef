import { Customer, CustomerDoc } from '../../models/customer';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { isDuplicateKey } from '../../models/errors';
import { ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { presentCustomer } from '../../presenters/customer';
import { recordEvent } from '../writes/events';
import { ensureWallet } from '../crypto/wallets';
import { normalizeEmail, optionalText } from '../writes/validate';
import { createListed, listScopePage, recountListSlots } from '../writes/listing';
import { customerSearchTerms } from '../../lib/searchTerms';

export interface CustomerInput {
  email?: string;
  first_name?: string | null;
  last_name?: string | null;
}

const emailTaken = () => ApiError.validation('email', 'has already been taken');

export function customerEventPayload(c: CustomerDoc) {
  return { ...presentCustomer(c), object: 'customer' };
}

export async function findCustomer(scope: Scope, id: string, param = 'id'): Promise<CustomerDoc> {
  const customer = await findInScope<CustomerDoc>(Customer, scope, id);
  if (!customer) throw ApiError.notFound('Customer not found', param);
  return customer;
}

/**
 * Under an Idempotency-Key (services/writes/creation.ts), a retry that took the key over from a request
 * that died after the write finds that customer and finishes what the first attempt may not have
 * (its wallet, `customer.created`), instead of answering that the email is taken.
 */
export async function createCustomer(scope: Scope, input: Required<Pick<CustomerInput, 'email'>> & CustomerInput, opts: CreateOptions = {}) {
  const id = createdId(ID_PREFIX.customer, opts);
  const earlier = await earlierAttempt<CustomerDoc>(Customer, scope, id, opts);
  if (earlier) {
    await ensureWallet(scope, 'customer', earlier._id);
    return announceCreatedCustomer(scope, earlier);
  }
  const doc = {
    _id: id,
    ...scopeFilter(scope),
    email: normalizeEmail(input.email),
    first_name: optionalText(input.first_name) ?? null,
    last_name: optionalText(input.last_name) ?? null,
  };
  let customer: CustomerDoc;
  try {
    customer = (await createListed(Customer, scope, { ...doc, search_terms: customerSearchTerms(doc) })).toObject() as CustomerDoc;
  } catch (err) {
    if (isDuplicateKey(err)) throw emailTaken();
    throw err;
  }
  try {
    await ensureWallet(scope, 'customer', customer._id);
  } catch (err) {
    // No customer without a wallet: undo the insert so a retry starts clean.
    await Customer.deleteOne({ _id: customer._id });
    await recountListSlots(Customer, [customer]);
    throw err;
  }
  return announceCreatedCustomer(scope, customer);
}

/** `customer.created`, once per customer (a retry that found the customer writes it only if missing). */
async function announceCreatedCustomer(scope: Scope, customer: CustomerDoc) {
  await recordEvent(scope, 'customer.created', customerEventPayload(customer), { idempotencyKey: `customer.created:${customer._id}` });
  return presentCustomer(customer);
}

export async function getCustomer(scope: Scope, id: string) {
  return presentCustomer(await findCustomer(scope, id));
}

export async function listCustomers(scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<CustomerDoc>(Customer, scope, page);
  return { customers: items.map(presentCustomer), pagination };
}

export async function updateCustomer(scope: Scope, id: string, input: CustomerInput) {
  const changes: Partial<CustomerDoc> = {};
  if (input.email !== undefined) changes.email = normalizeEmail(input.email);
  if (input.first_name !== undefined) changes.first_name = optionalText(input.first_name) ?? null;
  if (input.last_name !== undefined) changes.last_name = optionalText(input.last_name) ?? null;
  const current = await findCustomer(scope, id);
  changes.search_terms = customerSearchTerms({ ...current, ...changes });
  let customer: CustomerDoc | null;
  try {
    customer = await Customer.findByIdAndUpdate(id, { $set: changes }, { returnDocument: 'after' }).lean<CustomerDoc>();
  } catch (err) {
    if (isDuplicateKey(err)) throw emailTaken();
    throw err;
  }
  if (!customer) throw ApiError.notFound('Customer not found', 'id');
  await recordEvent(scope, 'customer.updated', customerEventPayload(customer));
  return presentCustomer(customer);
}
