/** RFC 6238 TOTP: six digits, 30 s step, one step of clock drift either way. */
import { Secret, TOTP } from 'otpauth';

function totp(secretBase32: string): TOTP {
  return new TOTP({ secret: Secret.fromBase32(secretBase32), digits: 6, period: 30, algorithm: 'SHA1' });
}

export function newOtpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function verifyOtp(secretBase32: string, token: string, timestamp = Date.now()): boolean {
  if (!/^\d{6}$/.test(token)) return false;
  return totp(secretBase32).validate({ token, timestamp, window: 1 }) !== null;
}

export function currentOtp(secretBase32: string, timestamp = Date.now()): string {
  return totp(secretBase32).generate({ timestamp });
}
