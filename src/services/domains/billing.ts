import type { DomainRuntime } from '../runtime';
import { onPricesDeleted } from '../prices';
import { removeLineItemsOfPrices, setSubscriptionCheck } from '../invoices';
import { removeSubscriptionsOfPrices, subscriptionExists } from '../subscriptions';

let registered = false;

/** Start-up of the billing domain: what a price delete takes with it, invoice -> subscription checks. */
export async function startBillingDomain(_rt: DomainRuntime): Promise<() => Promise<void>> {
  if (!registered) {
    onPricesDeleted(removeSubscriptionsOfPrices);
    onPricesDeleted(removeLineItemsOfPrices);
    setSubscriptionCheck(subscriptionExists);
    registered = true;
  }
  return async () => undefined;
}
