/**
 * The secret of an invoice's links (its hosted page and its PDF): `<invoice id>.<MAC>`, the MAC
 * an HMAC-SHA256 (base64url, 43 characters) under the deployment's invoice link key over the
 * invoice id and the link's generation. Derived, not stored: a new invoice's links cost no write,
 * and a rotation (the next generation) ends every earlier secret at once. Unguessable while the
 * key is secret; the invoice id in it only says which MAC to check.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

function mac(key: string, invoiceId: string, generation: number): Buffer {
  return createHmac('sha256', key).update(`invoice-link\n${invoiceId}\n${generation}`).digest();
}

export function invoiceLinkSecret(key: string, invoiceId: string, generation: number): string {
  return `${invoiceId}.${mac(key, invoiceId, generation).toString('base64url')}`;
}

/** The invoice a secret of this form names (to read its generation), or null for any other string. */
export function invoiceIdOfLinkSecret(secret: string): string | null {
  const parts = secret.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_]{1,64}$/.test(parts[0]) || !/^[A-Za-z0-9_-]{43}$/.test(parts[1])) return null;
  return parts[0];
}

/** Whether `secret` is the secret of `invoiceId`'s links at `generation` (compared in constant time). */
export function isInvoiceLinkSecret(key: string, secret: string, invoiceId: string, generation: number): boolean {
  if (invoiceIdOfLinkSecret(secret) !== invoiceId) return false;
  // The whole string, not its decoded bytes: a MAC's last character carries two unused bits, so
  // other spellings decode to the same bytes, and a link has one spelling.
  const given = Buffer.from(secret);
  const expected = Buffer.from(invoiceLinkSecret(key, invoiceId, generation));
  return given.length === expected.length && timingSafeEqual(given, expected);
}
