/**
 * When a price lookup may go upstream again (pure): how long a failed lookup is answered from
 * memory, and when the pay page's spot price is refreshed. The price API's quota is shared by
 * every process, so neither visitors nor retries may spend it call for call.
 */

/** The first failure of a key is remembered this long; each further one doubles it. */
export const PRICE_FAILURE_BACKOFF_MS = 5_000;
/** At most this long: a retried allocation asks upstream again within a minute (its workflow keeps retrying). */
export const PRICE_FAILURE_BACKOFF_MAX_MS = 60_000;

/** How long the `failures`-th consecutive failure of a key (1 = the first) is answered without asking upstream. */
export function priceFailureBackoffMs(failures: number, baseMs = PRICE_FAILURE_BACKOFF_MS, maxMs = PRICE_FAILURE_BACKOFF_MAX_MS): number {
  const n = Math.max(1, Math.floor(failures));
  // 2^(n-1) overflows to Infinity for large n: the cap still applies.
  return Math.min(maxMs, baseMs * 2 ** (n - 1));
}

/** The pay page's spot price is asked for at most this often (per currency and API process). */
export const SPOT_REFRESH_MS = 60_000;
/** A spot price older than this is not shown (no estimate) while the price API keeps failing. */
export const SPOT_MAX_AGE_MS = 10 * 60_000;

/** The last spot price of a currency: when it was fetched and when a refresh was last tried. */
export interface SpotEntry {
  price: string | null;
  fetchedAt: number | null;
  attemptedAt: number;
}

/** Whether a refresh is due: never tried, or the last try (success or not) is `refreshMs` old. */
export function spotRefreshDue(entry: SpotEntry | undefined, now: number, refreshMs = SPOT_REFRESH_MS): boolean {
  return !entry || now - entry.attemptedAt >= refreshMs;
}

/** The entry after a refresh: the new price, or (it failed) the old one with the try recorded. */
export function spotEntryAfter(entry: SpotEntry | undefined, now: number, price: string | null): SpotEntry {
  if (price !== null) return { price, fetchedAt: now, attemptedAt: now };
  return { price: entry?.price ?? null, fetchedAt: entry?.fetchedAt ?? null, attemptedAt: now };
}

/** The price to show: the last one fetched, unless it is older than `maxAgeMs`. */
export function spotPriceShown(entry: SpotEntry | undefined, now: number, maxAgeMs = SPOT_MAX_AGE_MS): string | null {
  if (!entry || entry.price === null || entry.fetchedAt === null) return null;
  return now - entry.fetchedAt <= maxAgeMs ? entry.price : null;
}
