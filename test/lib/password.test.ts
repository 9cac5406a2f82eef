import { hashPassword, verifyPassword } from '../../src/crypto/password';
import { currentOtp, newOtpSecret, verifyOtp } from '../../src/crypto/totp';

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
});
