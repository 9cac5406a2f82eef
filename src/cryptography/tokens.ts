/** API tokens: 32 lowercase hex characters; only their SHA-256 is stored. */
import { createHash } from 'node:crypto';
import { randomHex } from '../lib/ids';

export function newApiToken(): string {
  return randomHex(16);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export const TOKEN_FORMAT = /^[0-9a-f]{32}$/;
