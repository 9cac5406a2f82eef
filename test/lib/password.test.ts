import { scryptSync } from 'node:crypto';
import { DUMMY_HASH, hashPassword, needsRehash, verifyPassword } from '../../src/cryptography/password';
import { currentOtp, newOtpSecret, otpStep, verifyOtp } from '../../src/cryptography/totp';

/** A hash as the service made them before issue 11 (N=2^14). */
function legacyHash(password: string): string {
  const salt = Buffer.alloc(16, 7);
  return ['scrypt', 16384, 8, 1, salt.toString('base64'), scryptSync(password, salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64')].join('$');
}

describe('passwords', () => {
  it('hash with a salt and verify only the right password', async () => {
    const h1 = await hashPassword('s3cret-pass');
    const h2 = await hashPassword('s3cret-pass');
    expect(h1).not.toBe(h2);
    expect(h1.startsWith('scrypt$')).toBe(true);
    expect(await verifyPassword('s3cret-pass', h1)).toBe(true);
    expect(await verifyPassword('s3cret-pasS', h1)).toBe(false);
    expect(await verifyPassword('s3cret-pass', 'garbage')).toBe(false);
  });

  it("use OWASP's scrypt minimum (N=2^17, r=8, p=1), still verify older hashes and mark them for a rehash", async () => {
    const h = await hashPassword('s3cret-pass');
    expect(h).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(needsRehash(h)).toBe(false);
    const old = legacyHash('s3cret-pass');
    expect(await verifyPassword('s3cret-pass', old)).toBe(true);
    expect(needsRehash(old)).toBe(true);
    expect(needsRehash('argon2$whatever')).toBe(true);
    // The dummy checked for unknown emails costs what a real hash costs.
    expect(DUMMY_HASH).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword('s3cret-pass', DUMMY_HASH)).toBe(false);
  });
});

describe('TOTP (RFC 6238)', () => {
  it('matches the RFC test vector for SHA-1', () => {
    // RFC 6238 appendix B: secret "12345678901234567890", T = 59 s -> 94287082 (8 digits); 6 digits: 287082.
    const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
    expect(currentOtp(secret, 59_000)).toBe('287082');
    expect(currentOtp(secret, 1111111109_000)).toBe('081804');
  });

  it('accepts one step of drift, not two', () => {
    const secret = newOtpSecret();
    const now = Date.UTC(2026, 0, 1, 12, 0, 15);
    expect(verifyOtp(secret, currentOtp(secret, now), now)).toBe(true);
    expect(verifyOtp(secret, currentOtp(secret, now - 30_000), now)).toBe(true);
    expect(verifyOtp(secret, currentOtp(secret, now + 30_000), now)).toBe(true);
    const far = currentOtp(secret, now - 90_000);
    if (far !== currentOtp(secret, now) && far !== currentOtp(secret, now - 30_000) && far !== currentOtp(secret, now + 30_000)) {
      expect(verifyOtp(secret, far, now)).toBe(false);
    }
    expect(verifyOtp(secret, 'abcdef', now)).toBe(false);
  });

  it('names the time step a code belongs to, so a used step can be refused', () => {
    const secret = newOtpSecret();
    const now = Date.UTC(2026, 0, 1, 12, 0, 15);
    const step = Math.floor(now / 30_000);
    expect(otpStep(secret, currentOtp(secret, now), now)).toBe(step);
    expect(otpStep(secret, currentOtp(secret, now - 30_000), now)).toBe(step - 1);
    expect(otpStep(secret, currentOtp(secret, now + 30_000), now)).toBe(step + 1);
    expect(otpStep(secret, '12345', now)).toBeNull();
  });
});
