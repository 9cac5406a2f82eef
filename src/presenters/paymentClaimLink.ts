import { PaymentClaimLinkDoc } from '../models/paymentClaimLink';
import { iso } from './common';

/** Usable: active, not past `expires_at`, uses left (spec). */
export function linkUsable(l: PaymentClaimLinkDoc, now = Date.now()): boolean {
  return l.status === 'active' && new Date(l.expires_at).getTime() > now && (l.use_count ?? 0) < l.max_uses;
}

/** The status as of now: an active link past its expiry reads `expired` even before the workflow marks it. */
export function effectiveLinkStatus(l: PaymentClaimLinkDoc, now = Date.now()): PaymentClaimLinkDoc['status'] {
  if (l.status === 'active' && new Date(l.expires_at).getTime() <= now) return 'expired';
  return l.status;
}

export function linkUrl(publicUrl: string, secret: string): string {
  return `${publicUrl}/pay/${secret}`;
}

export function presentPaymentClaimLink(l: PaymentClaimLinkDoc, publicUrl: string, now = Date.now()) {
  const status = effectiveLinkStatus(l, now);
  return {
    id: l._id,
    object: 'payment_claim_link' as const,
    status,
    expires_at: iso(l.expires_at),
    max_uses: l.max_uses,
    use_count: l.use_count ?? 0,
    used_at: iso(l.used_at ?? null),
    // The contract types it `string`, not "string or null": none given reads "".
    metadata: l.metadata ?? '',
    price_id: l.price_id ?? null,
    link: linkUrl(publicUrl, l.secret),
    customer_id: l.customer_id,
    crypto_payment_claim_id: l.crypto_payment_claim_id ?? null,
    usable: linkUsable(l, now),
    expired: status === 'expired',
    created_at: iso(l.created_at),
    updated_at: iso(l.updated_at),
  };
}
