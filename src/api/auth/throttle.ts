/**
 * Sign-in throttling for POST /v1/auth and the console's sign-in. Its counts (attempts and
 * failures) live in a ThrottleStore: this process's memory by default, Redis with REDIS_URL
 * (src/api/auth/throttleStore.ts), so that every API process sees every failure. The queue of
 * checks below is this process's CPU and memory protection and stays per process. Every attempt costs a 128 MiB scrypt, and a
 * password or TOTP code can otherwise be guessed without end; yet nobody else's failures may
 * keep an owner out:
 * - per client: at most `attemptsPerMinute` attempts a minute, whatever their outcome;
 * - per (email, client) and per client over any emails: failures past a free allowance lock the
 *   key, the lock doubling with each further failure up to `maxLockMs`. A client's failures
 *   never lock the email for other clients;
 * - per email, from every client together: failures past a free allowance slow each attempt on
 *   that email down (a pause before its password check, at most `emailSlowdown.maxDelayMs`),
 *   never refuse it. A browser that signed in to that email before (its device cookie) is
 *   neither slowed nor locked by others: its own failures lock (email, device);
 * - at most `concurrentChecks` checks at once (each holds a libuv thread and 128 MiB), the others
 *   waiting in turn client by client, `queuedChecksPerClient` each and `queuedChecks` in all;
 *   past that the client is told the service is busy (a flooding client loses its newest
 *   waiting check to a client with none waiting).
 * A client is its IP address, an IPv6 client its /64 (src/lib/network.ts `clientKey`).
 */
import { clientKey } from '../../lib/network';
import { memoryThrottleStore, ThrottleStore } from './throttleStore';

export const AUTH_LIMITS = {
  attemptsPerMinute: 30,
  freeFailures: { emailClient: 5, client: 20 },
  firstLockMs: 1000,
  maxLockMs: 15 * 60_000,
  /** The pause of every attempt on an email past its free failures: doubling from the first to the most. */
  emailSlowdown: { freeFailures: 5, firstDelayMs: 250, maxDelayMs: 2000 },
  /** Failures older than this (counted from the last one) are forgotten. */
  forgetAfterMs: 60 * 60_000,
  concurrentChecks: 2,
  queuedChecks: 50,
  queuedChecksPerClient: 2,
};
export type AuthLimits = typeof AUTH_LIMITS;

/** Who is signing in: the client address, the email (as looked up), and the browser's device id when its cookie is valid for that email. */
export interface SignInAttempt {
  ip: string;
  email: string;
  device?: string | null;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class AuthBusyError extends Error {}

export class AuthThrottle {
  private running = 0;
  /** Waiting checks by client, in turn order (a Map keeps insertion order). */
  private readonly waiting = new Map<string, Waiter[]>();
  private waitingCount = 0;
  private readonly store: ThrottleStore;

  constructor(
    private readonly limits: AuthLimits = AUTH_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    store?: ThrottleStore,
  ) {
    this.store = store ?? memoryThrottleStore(limits.forgetAfterMs, now);
  }

  /** Waits `ms` (from slowdownMs) on the throttle's clock. */
  async pause(ms: number): Promise<void> {
    if (ms > 0) await this.sleep(ms);
  }

  /**
   * Seconds to wait before this attempt may be made, or 0 when it may go ahead (it then counts
   * against the client's per-minute budget; a refused attempt does not).
   */
  async admit(a: SignInAttempt): Promise<number> {
    const now = this.now();
    const client = clientKey(a.ip);
    // A browser with the email's device cookie answers for its own failures only.
    const keys = a.device ? [this.pairKey(a)] : [this.pairKey(a), `client:${client}`];
    const [pair, byClient] = await this.store.failures(keys);
    const waitMs = Math.max(
      this.lockedFor(pair, this.limits.freeFailures.emailClient, now),
      this.lockedFor(byClient, this.limits.freeFailures.client, now),
    );
    const minute = Math.floor(now / 60_000);
    const budgetMs = (minute + 1) * 60_000 - now;
    if (waitMs > 0) {
      // Refused attempts do not count; the answer is the longer of the lock and the spent budget.
      const spent = (await this.store.attemptsIn(client, minute)) >= this.limits.attemptsPerMinute;
      return Math.ceil(Math.max(waitMs, spent ? budgetMs : 0) / 1000);
    }
    if (await this.store.takeAttempt(client, minute, this.limits.attemptsPerMinute)) return 0;
    return Math.ceil(budgetMs / 1000);
  }

  /** Milliseconds an admitted attempt pauses before its check: others' failures on the email slow guessing down, a known browser not at all. */
  async slowdownMs(a: SignInAttempt): Promise<number> {
    if (a.device) return 0;
    const { freeFailures, firstDelayMs, maxDelayMs } = this.limits.emailSlowdown;
    const [f] = await this.store.failures([`email:${a.email}`]);
    if (!f || f.count <= freeFailures) return 0;
    return Math.min(firstDelayMs * 2 ** Math.min(f.count - freeFailures - 1, 30), maxDelayMs);
  }

  async failed(a: SignInAttempt): Promise<void> {
    await this.store.addFailure([this.pairKey(a), `email:${a.email}`, `client:${clientKey(a.ip)}`], this.now());
  }

  /** A success clears the (email, client) lock. Not the email's slow-down: the owner's success says nothing of others guessing. */
  async succeeded(a: SignInAttempt): Promise<void> {
    await this.store.clearFailures(this.pairKey(a));
  }

  /** Runs one sign-in check of `ip` in a free slot, in turn with other clients; AuthBusyError when it may not wait. */
  async run<T>(ip: string, check: () => Promise<T>): Promise<T> {
    if (this.running < this.limits.concurrentChecks) this.running += 1;
    else await this.enqueue(clientKey(ip));
    try {
      return await check();
    } finally {
      // Hand the slot straight to the next client's waiter, or free it.
      const next = this.dequeue();
      if (next) next.resolve();
      else this.running -= 1;
    }
  }

  private enqueue(client: string): Promise<void> {
    const own = this.waiting.get(client) ?? [];
    if (own.length >= this.limits.queuedChecksPerClient) return Promise.reject(new AuthBusyError('Too many sign-ins in progress'));
    if (this.waitingCount >= this.limits.queuedChecks && !this.evictFor(own.length)) return Promise.reject(new AuthBusyError('Too many sign-ins in progress'));
    return new Promise<void>((resolve, reject) => {
      own.push({ resolve, reject });
      this.waiting.set(client, own);
      this.waitingCount += 1;
    });
  }

  /** The queue is full: the newest waiter of the client with the most waiting makes way for one with fewer. */
  private evictFor(ownCount: number): boolean {
    let most: [string, Waiter[]] | null = null;
    for (const entry of this.waiting) if (!most || entry[1].length > most[1].length) most = entry;
    if (!most || most[1].length <= ownCount + 1) return false;
    most[1].pop()!.reject(new AuthBusyError('Too many sign-ins in progress'));
    this.waitingCount -= 1;
    return true;
  }

  /** The next waiter in turn: the first client's oldest, that client then going to the back. */
  private dequeue(): Waiter | undefined {
    const first = this.waiting.entries().next();
    if (first.done) return undefined;
    const [client, queue] = first.value;
    const waiter = queue.shift()!;
    this.waiting.delete(client);
    if (queue.length > 0) this.waiting.set(client, queue);
    this.waitingCount -= 1;
    return waiter;
  }

  private pairKey(a: SignInAttempt): string {
    return `pair:${a.email}|${a.device ? `device:${a.device}` : clientKey(a.ip)}`;
  }

  /** Milliseconds the key is still locked: none within the free failures, then 1 s, 2 s, 4 s... */
  private lockedFor(f: { count: number; last: number } | undefined, free: number, now: number): number {
    if (!f || f.count <= free) return 0;
    const lock = Math.min(this.limits.firstLockMs * 2 ** Math.min(f.count - free - 1, 30), this.limits.maxLockMs);
    return Math.max(0, f.last + lock - now);
  }
}
