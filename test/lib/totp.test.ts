import { currentOtp, newOtpSecret, otpStep, verifyOtp } from '../../src/cryptography/totp';

// RFC 6238 appendix B's SHA-1 secret ("12345678901234567890") in base32.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('TOTP edges', () => {
  it('makes 160-bit secrets (32 base32 characters), each different', () => {
    const secrets = new Set(Array.from({ length: 20 }, newOtpSecret));
    expect(secrets.size).toBe(20);
    for (const s of secrets) expect(s).toMatch(/^[A-Z2-7]{32}$/);
  });

  it('takes exactly six digits', () => {
    const now = 1111111109_000;
    const code = currentOtp(RFC_SECRET, now);
    expect(code).toBe('081804');
    expect(otpStep(RFC_SECRET, code, now)).toBe(Math.floor(now / 30_000));
    for (const bad of [`${code}0`, `0${code}`, ` ${code}`, `${code}\n`, code.slice(1), '08180a']) {
      expect([bad, otpStep(RFC_SECRET, bad, now)]).toEqual([bad, null]);
    }
  });

  it('uses 30 s steps: a code stays valid through the next step and no longer', () => {
    const start = 1111111110_000; // a step boundary (37037037 * 30 s)
    const code = currentOtp(RFC_SECRET, start);
    expect(currentOtp(RFC_SECRET, start + 29_999)).toBe(code);
    expect(currentOtp(RFC_SECRET, start + 30_000)).not.toBe(code);
    expect(otpStep(RFC_SECRET, code, start + 59_999)).toBe(start / 30_000);
    expect(verifyOtp(RFC_SECRET, code, start - 30_000)).toBe(true);
    expect(verifyOtp(RFC_SECRET, code, start + 60_000)).toBe(false);
    expect(verifyOtp(RFC_SECRET, code, start - 30_001)).toBe(false);
  });

  it('uses the clock when no timestamp is given', () => {
    const secret = newOtpSecret();
    const before = Date.now();
    const code = currentOtp(secret);
    const after = Date.now();
    expect([currentOtp(secret, before), currentOtp(secret, after)]).toContain(code);
    expect(verifyOtp(secret, code)).toBe(true);
    expect([Math.floor(before / 30_000), Math.floor(after / 30_000)]).toContain(otpStep(secret, code));
  });
});
