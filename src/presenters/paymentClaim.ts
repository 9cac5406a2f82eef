import { PaymentClaimDoc } from '../models/paymentClaim';
import { iso } from './common';

export function presentPaymentClaim(c: PaymentClaimDoc) {
  return {
    id: c._id,
    object: 'payment_claim' as const,
    status: c.status,
    amount: c.amount,
    transaction_id: c.transaction_id,
    rejection_reason: c.rejection_reason ?? null,
    approved_at: iso(c.approved_at ?? null),
    customer_id: c.customer_id,
    currency: c.currency,
    to_address_id: c.to_address_id,
    to_address: c.to_address,
    approved_by_id: c.approved_by_id ?? null,
    crypto_transaction_id: c.crypto_transaction_id ?? null,
    payment_claim_link_id: c.payment_claim_link_id,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}
