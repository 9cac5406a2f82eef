/** RFC 6238 TOTP: six digits, 30 s step, one step of clock drift either way. */
import { Secret, TOTP } from 'otpauth';

const PERIOD_S = 30;

function totp(secretBase32: string): TOTP {
  return new TOTP({ secret: Secret.fromBase32(secretBase32), digits: 6, period: PERIOD_S, algorithm: 'SHA1' });
}

export function newOtpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The time step (Unix seconds / 30) the code belongs to, or null when it matches none in the window. */
export function otpStep(secretBase32: string, token: string, timestamp = Date.now()): number | null {
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totp(secretBase32).validate({ token, timestamp, window: 1 });
  return delta === null ? null : Math.floor(timestamp / 1000 / PERIOD_S) + delta;
}

export function verifyOtp(secretBase32: string, token: string, timestamp = Date.now()): boolean {
  return otpStep(secretBase32, token, timestamp) !== null;
}

export function currentOtp(secretBase32: string, timestamp = Date.now()): string {
  return totp(secretBase32).generate({ timestamp });
}
