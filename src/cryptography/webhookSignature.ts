/**
 * Webhook signatures: `X-Service-Signature: t=<unix>,v1=<hex>` where v1 is the lowercase hex
 * HMAC-SHA256 of `<t>.<raw body>` keyed with the full secret (including `whsec_`).
 * Web Crypto only, so it runs the same in Node, Deno and browsers. Pure apart from crypto.
 */
const encoder = new TextEncoder();

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const sig = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
  return Array.from(sig, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `whsec_` + 64 lowercase hex characters. */
export function newSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return 'whsec_' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export const SIGNING_SECRET_FORMAT = /^whsec_[0-9a-f]{64}$/;

/** The header value for a delivery signed at `timestamp` (unix seconds). */
export async function signWebhook(secret: string, timestamp: number, rawBody: string): Promise<string> {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError('timestamp must be whole unix seconds');
  return `t=${timestamp},v1=${await hmacHex(secret, `${timestamp}.${rawBody}`)}`;
}

/** Constant-time comparison of two equal-length hex strings. */
function timingSafeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export interface VerifyOptions {
  /** Largest accepted difference between `t` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Current unix time in seconds (default: the clock). */
  now?: number;
}

/**
 * For receivers: parses `t` and every `v1`, rejects a timestamp outside the tolerance and
 * compares in constant time.
 */
export async function verifyWebhookSignature(rawBody: string, header: string, secret: string, opts: VerifyOptions = {}): Promise<boolean> {
  const tolerance = opts.toleranceSeconds ?? 300;
  // Receivers may omit `now`; code that must stay deterministic (workflows) passes it.
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (typeof rawBody !== 'string' || typeof secret !== 'string' || secret === '') return false;
  if (!Number.isFinite(now) || !Number.isFinite(tolerance) || tolerance < 0) return false;
  let t: number | null = null;
  const candidates: string[] = [];
  for (const part of String(header ?? '').split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't') {
      // Exactly one well-formed `t`; a second one makes the header ambiguous.
      if (t !== null || !/^\d{1,12}$/.test(v)) return false;
      t = Number(v);
    } else if (k === 'v1' && /^[0-9a-f]{64}$/i.test(v)) candidates.push(v.toLowerCase());
  }
  if (t === null || candidates.length === 0) return false;
  if (Math.abs(now - t) > tolerance) return false;
  const expected = await hmacHex(secret, `${t}.${rawBody}`);
  let ok = false;
  for (const c of candidates) ok = timingSafeEqualHex(c, expected) || ok;
  return ok;
}
