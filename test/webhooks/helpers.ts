/** Shared by the webhook tests: an independent signature check (and polling, from support/wait). */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The spec's check, written from the spec and not from the service's code. */
export function signatureValid(rawBody: string, header: string | string[] | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.split('=') as [string, string]));
  if (!/^\d+$/.test(parts.t ?? '') || !/^[0-9a-f]{64}$/.test(parts.v1 ?? '')) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(parts.v1, 'hex'));
}

export { waitFor, sleep } from '../support/wait';
