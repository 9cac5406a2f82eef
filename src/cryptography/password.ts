/** Password hashing with scrypt (N=2^17, r=8, p=1: OWASP's minimum), encoded as `scrypt$N$r$p$salt$hash` (base64). */
import { scrypt as scryptCb, randomBytes, timingSafeEqual } from 'node:crypto';

const N = 131072, R = 8, P = 1, KEYLEN = 32;
// scrypt needs 128·N·r bytes (128 MiB here); Node refuses more than maxmem, 32 MiB by default.
const MAXMEM = 256 * 1024 * 1024;

/**
 * The hash of a random password nobody knows, with the current parameters. Checked for an
 * unknown email so that the answer takes as long as for a known one.
 */
export const DUMMY_HASH = 'scrypt$131072$8$1$fJBMmswVTdt8fm3rFpOXYQ==$qJzYQ3DR4ctlrcFWNyZ6EO3hbzi1iBdTPljycsRtD8c=';

function scrypt(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEYLEN, { N: n, r, p, maxmem: MAXMEM }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, N, R, P);
  return ['scrypt', N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [alg, n, r, p, salt, hash] = encoded.split('$');
  if (alg !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(password, Buffer.from(salt, 'base64'), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash made with other parameters than today's: replaced at the next successful sign-in. */
export function needsRehash(encoded: string): boolean {
  const [alg, n, r, p] = encoded.split('$');
  return alg !== 'scrypt' || Number(n) !== N || Number(r) !== R || Number(p) !== P;
}
