/**
 * The console's device cookie: proof that this browser signed in to an email before, so that
 * others' failed sign-ins on that email neither slow it down nor lock it (OWASP's "device
 * cookies"). `<issued unix seconds>.<random id>.<HMAC-SHA256 over email, issued and id>`, base64url.
 * The email is in the MAC, not the cookie: the cookie is worth nothing for another email.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a browser stays known after its last sign-in. */
export const DEVICE_COOKIE_TTL_SECONDS = 180 * 86400;

function mac(key: string, email: string, issued: string, id: string): Buffer {
  return createHmac('sha256', key).update(`console-device\n${email}\n${issued}\n${id}`).digest();
}

export function deviceCookie(key: string, email: string, nowMs: number, id: string = randomBytes(12).toString('base64url')): string {
  const issued = String(Math.floor(nowMs / 1000));
  return `${issued}.${id}.${mac(key, email, issued, id).toString('base64url')}`;
}

/** The browser's device id when `cookie` was issued for `email` with `key` and has not expired; else null. */
export function deviceOf(key: string, cookie: string | undefined, email: string, nowMs: number): string | null {
  const [issued, id, sig, ...rest] = (cookie ?? '').split('.');
  if (!issued || !id || !sig || rest.length > 0 || !/^\d{1,12}$/.test(issued) || id.length > 64) return null;
  const age = nowMs / 1000 - Number(issued);
  if (age < -60 || age > DEVICE_COOKIE_TTL_SECONDS) return null;
  const given = Buffer.from(sig, 'base64url');
  const expected = mac(key, email, issued, id);
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}
