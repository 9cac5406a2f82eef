/** Event names of the spec's table. Pure: shared by the API, services and workflows. */
export const EVENT_NAMES = [
  'customer.created', 'customer.updated', 'customer.deleted',
  'product.created', 'product.updated', 'product.deleted',
  'price.created', 'price.updated', 'price.deleted',
  'invoice.created', 'invoice.updated', 'invoice.paid', 'invoice.overdue',
  'subscription.created', 'subscription.activated', 'subscription.canceled', 'subscription.renewed',
  'subscription_phase.created', 'subscription_phase.updated', 'subscription_phase.deleted',
  'wallet.created',
  'crypto_address.created', 'crypto_address.deleted',
  'payment_claim.submitted', 'payment_claim.approved', 'payment_claim.rejected',
  'crypto_transaction.received', 'crypto_transaction.allocated',
  // Added: the chain paid another amount than a transaction recorded by hand says.
  'crypto_transaction.amount_mismatch',
  'transaction_allocation.created',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

export function isEventName(name: string): name is EventName {
  return (EVENT_NAMES as readonly string[]).includes(name);
}
