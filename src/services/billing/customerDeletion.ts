/**
 * Deleting a customer, with what goes with it (spec cascade table): its wallet and its payment
 * claim links. Apart from customers.ts, which payment claim links need (to check a link's
 * customer), so that neither imports the other.
 */
import { Customer, CustomerDoc } from '../../models/customer';
import type { Scope } from '../../models/scope';
import { ApiError } from '../../lib/errors';
import type { Dependencies } from '../../dependencies';
import { customerEventPayload, findCustomer } from './customers';
import { recordEvent } from '../writes/events';
import { recountListSlots } from '../writes/listing';
import { deleteCustomerWallet } from '../crypto/wallets';
import { deleteCustomerPaymentClaimLinks } from '../crypto/paymentClaimLinks';

export async function deleteCustomer(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  await findCustomer(scope, id);
  const customer = await Customer.findByIdAndDelete(id).lean<CustomerDoc>();
  if (!customer) throw ApiError.notFound('Customer not found', 'id');
  await recountListSlots(Customer, [customer]);
  await deleteCustomerWallet(deps, scope, id);
  // Its payment claim links too: none stays usable at /pay/<secret> for a deleted customer.
  await deleteCustomerPaymentClaimLinks(deps, scope, id);
  await recordEvent(scope, 'customer.deleted', customerEventPayload(customer));
}
