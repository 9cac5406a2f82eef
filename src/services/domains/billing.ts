import type { DomainRuntime } from '../runtime';
import { onPricesDeleted } from '../prices';
import { removeLineItemsOfPrices } from '../invoices';

let registered = false;

/** Start-up of the billing domain: the price-delete cascade to line items. */
export async function startBillingDomain(_rt: DomainRuntime): Promise<() => Promise<void>> {
  if (!registered) {
    onPricesDeleted(removeLineItemsOfPrices);
    registered = true;
  }
  return async () => undefined;
}
