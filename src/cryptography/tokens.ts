/** API tokens: 32 lowercase hex characters; only their SHA-256 is stored. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomHex } from '../lib/ids';

export function newApiToken(): string {
  return randomHex(16);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export const TOKEN_FORMAT = /^[0-9a-f]{32}$/;

/**
 * Whether an `Authorization` header is exactly `Bearer <token>` (the scheme case-insensitive).
 * Compared as SHA-256 digests in constant time, so neither the length nor a prefix leaks.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^bearer +(\S+)$/i.exec((header ?? '').trim());
  return m !== null && timingSafeEqual(createHash('sha256').update(m[1]).digest(), createHash('sha256').update(token).digest());
}
