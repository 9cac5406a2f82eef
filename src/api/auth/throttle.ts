/**
 * Sign-in throttling for POST /v1/auth, kept in the API process like the per-token limit (with
 * several API processes each keeps its own counts). Every attempt costs a 128 MiB scrypt, and a
 * password or TOTP code can otherwise be guessed without end:
 * - per client: at most `attemptsPerMinute` attempts a minute, whatever their outcome;
 * - per client and per email: failures past a free allowance lock the key, the lock doubling
 *   with each further failure up to `maxLockMs`; a success clears the email's count;
 * - at most `concurrentChecks` sign-ins are checked at once (each holds a libuv thread), with
 *   `queuedChecks` waiting; past that the service is busy.
 * A client is its IP address, an IPv6 client its /64 (one host usually holds a whole /64).
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export const AUTH_LIMITS = {
  attemptsPerMinute: 30,
  freeFailures: { email: 5, client: 20 },
  firstLockMs: 1000,
  maxLockMs: 15 * 60_000,
  /** Failures older than this (counted from the last one) are forgotten. */
  forgetAfterMs: 60 * 60_000,
  concurrentChecks: 2,
  queuedChecks: 50,
};
export type AuthLimits = typeof AUTH_LIMITS;

/** Counts kept before old entries are swept, so a flood of new keys cannot grow memory without end. */
const MAX_KEYS = 100_000;

interface Failures {
  count: number;
  last: number;
}

export class AuthBusyError extends Error {}

export function clientKey(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const addr = ipaddr.process(ip);
  if (addr.kind() === 'ipv4') return addr.toString();
  return `${(addr as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64`;
}

export class AuthThrottle {
  private readonly failures = new Map<string, Failures>();
  private readonly attempts = new Map<string, { minute: number; count: number }>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly limits: AuthLimits = AUTH_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Seconds to wait before this attempt may be made, or 0 when it may go ahead (it then counts
   * against the client's per-minute budget; a refused attempt does not).
   */
  admit(ip: string, email: string): number {
    const now = this.now();
    const client = clientKey(ip);
    const waitMs = Math.max(this.lockedFor(`email:${email}`, this.limits.freeFailures.email, now), this.lockedFor(`client:${client}`, this.limits.freeFailures.client, now));
    const minute = Math.floor(now / 60_000);
    const a = this.attempts.get(client);
    const count = a && a.minute === minute ? a.count : 0;
    const budgetMs = count >= this.limits.attemptsPerMinute ? (minute + 1) * 60_000 - now : 0;
    const wait = Math.max(waitMs, budgetMs);
    if (wait > 0) return Math.ceil(wait / 1000);
    if (this.attempts.size >= MAX_KEYS) this.sweep(now);
    if (this.attempts.size >= MAX_KEYS) this.attempts.clear(); // a flood of clients within one minute
    this.attempts.set(client, { minute, count: count + 1 });
    return 0;
  }

  failed(ip: string, email: string): void {
    const now = this.now();
    for (const key of [`email:${email}`, `client:${clientKey(ip)}`]) {
      const f = this.current(key, now);
      this.failures.set(key, { count: (f?.count ?? 0) + 1, last: now });
    }
    if (this.failures.size >= MAX_KEYS) this.sweep(now);
  }

  succeeded(email: string): void {
    this.failures.delete(`email:${email}`);
  }

  /** Runs one sign-in check in a free slot; AuthBusyError when too many are already waiting. */
  async run<T>(check: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.concurrentChecks) {
      if (this.waiting.length >= this.limits.queuedChecks) throw new AuthBusyError('Too many sign-ins in progress');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await check();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }

  private current(key: string, now: number): Failures | undefined {
    const f = this.failures.get(key);
    if (f && now - f.last > this.limits.forgetAfterMs) {
      this.failures.delete(key);
      return undefined;
    }
    return f;
  }

  /** Milliseconds the key is still locked: none within the free failures, then 1 s, 2 s, 4 s... */
  private lockedFor(key: string, free: number, now: number): number {
    const f = this.current(key, now);
    if (!f || f.count <= free) return 0;
    const lock = Math.min(this.limits.firstLockMs * 2 ** Math.min(f.count - free - 1, 30), this.limits.maxLockMs);
    return Math.max(0, f.last + lock - now);
  }

  private sweep(now: number): void {
    const minute = Math.floor(now / 60_000);
    for (const [k, a] of this.attempts) if (a.minute !== minute) this.attempts.delete(k);
    for (const k of [...this.failures.keys()]) this.current(k, now);
    // Still full of fresh keys (a flood): drop the counts that lock nothing yet.
    if (this.failures.size >= MAX_KEYS) {
      for (const [k, f] of this.failures) {
        if (f.count <= (k.startsWith('email:') ? this.limits.freeFailures.email : this.limits.freeFailures.client)) this.failures.delete(k);
      }
    }
  }
}
