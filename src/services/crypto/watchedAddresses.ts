/**
 * The set of addresses a chain watcher looks for in each block. Reading every address of a
 * currency costs in proportion to how many merchants' addresses there are (with 10,000 it was
 * most of the CPU of a poll that finds a block), while the set itself changes only when an
 * address is added or removed. So each change writes a new version (`markWatchedAddressesChanged`,
 * after the address write) and a watcher process keeps the set it read with the version it read
 * before it, reading the set again only when the version moved (or the copy is older than
 * `maxAgeMs`, should a version write have been lost to a crash between the two writes).
 */
import { randomString } from '../../lib/ids';
import type { CryptoCurrency } from '../../cryptocurrency/addresses';
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { WatchedAddressesVersion, WatchedAddressesVersionDoc } from '../../models/chainPayment';

/** Called after an address of `currency` was added or removed. */
export async function markWatchedAddressesChanged(currency: CryptoCurrency): Promise<void> {
  await WatchedAddressesVersion.updateOne({ _id: currency }, { $set: { version: randomString(16) } }, { upsert: true });
}

export interface WatchedAddresses {
  /** The canonical keys of every address of `currency`, as of the start of this call. */
  keys(currency: CryptoCurrency): Promise<ReadonlySet<string>>;
}

/** A watcher process's copy of the watched sets; `now` in ms (tests pass their own clock). */
export function createWatchedAddresses(opts: { maxAgeMs?: number; now?: () => number } = {}): WatchedAddresses {
  const maxAgeMs = opts.maxAgeMs ?? 5 * 60_000;
  const now = opts.now ?? Date.now;
  const copies = new Map<CryptoCurrency, { version: string | null; readAt: number; keys: Set<string> }>();
  return {
    async keys(currency) {
      // The version first: an address added after this read changes it again, and is read next time.
      const version = (await WatchedAddressesVersion.findById(currency).lean<WatchedAddressesVersionDoc>())?.version ?? null;
      const copy = copies.get(currency);
      if (copy && copy.version === version && now() - copy.readAt < maxAgeMs) return copy.keys;
      const readAt = now();
      const rows = await CryptoAddress.find({ currency }, { address_key: 1 }).lean<Pick<CryptoAddressDoc, 'address_key'>[]>();
      const keys = new Set(rows.map((r) => r.address_key));
      copies.set(currency, { version, readAt, keys });
      return keys;
    },
  };
}
