/** Opaque resource ids: a type prefix and 24 random base62 characters (docs/adr/0102-resource-ids.md). */
import { createHash } from 'node:crypto';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const ID_PREFIX = {
  account: 'acct_',
  customer: 'cust_',
  product: 'prod_',
  price: 'price_',
  invoice: 'inv_',
  lineItem: 'li_',
  subscription: 'sub_',
  subscriptionPhase: 'sub_phase_',
  subscriptionItem: 'si_',
  wallet: 'wall_',
  cryptoAddress: 'addr_',
  cryptoTransaction: 'trxn_',
  allocation: 'alloc_',
  paymentClaim: 'pymt_claim_',
  paymentClaimLink: 'pcl_',
  webhookEndpoint: 'we_',
  event: 'evt_',
} as const;

/** Uniform random characters from `alphabet` using Web Crypto (rejection sampling, no modulo bias). */
export function randomString(length: number, alphabet = ALPHABET): string {
  const out: string[] = [];
  const limit = 256 - (256 % alphabet.length);
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(Math.min(65536, (length - out.length) * 2)));
    for (const b of bytes) {
      if (b < limit && out.length < length) out.push(alphabet[b % alphabet.length]);
    }
  }
  return out.join('');
}

export function newId(prefix: (typeof ID_PREFIX)[keyof typeof ID_PREFIX]): string {
  return prefix + randomString(24);
}

export function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The id a key always maps to (SHA-256 of the key in base62), for records an activity may
 * write more than once: the second write hits the same `_id` and changes nothing.
 */
export function derivedId(prefix: (typeof ID_PREFIX)[keyof typeof ID_PREFIX], key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let out = '';
  for (let i = 0; out.length < 24; i++) out += ALPHABET[digest[i] % 62];
  return prefix + out;
}
