/**
 * On-chain detection, one scan at a time (run by the watcher workflow's activity). A scan:
 * 1. checks the cursor's block is still in the best chain, else resumes lower (reorg);
 * 2. reads the next blocks and notes every payment to a watched address as a chain payment
 *    (`pending`, upserted by tx hash and output, so rescans write the same record);
 * 3. re-checks where every unfinished chain payment is now: gone from the best chain ->
 *    `dropped` (never recorded, never allocated); in another block -> moved;
 * 4. records a payment that reached the confirmation threshold as a `blockchain` crypto
 *    transaction in every scope holding the address, which allocates it.
 * Like BTCPay's detectors, it only records payments; allocation stays with services/allocation.
 */
import type { Config } from '../../config';
import { CryptoCurrency, validateAddress } from '../../cryptocurrency/addresses';
import { decimalPlacesOf, Dec, formatCryptoAmount } from '../../cryptocurrency/amounts';
import { watchedCurrencies } from '../../chains';
import { BlockRef, ChainClient, ChainPayment, ChainUnavailableError } from '../../chains/types';
import { confirmationsOf, initialCursorHeight, nextScanRange, rewoundCursorHeight } from '../../chains/scan';
import { ChainCursor, ChainCursorDoc, ChainPaymentDoc, ChainPaymentRecord } from '../../models/chainPayment';
import { CryptoAddress, CryptoAddressDoc } from '../../models/cryptoAddress';
import { isDuplicateKey } from '../../models/errors';
import { scopeOfDoc } from '../../models/scope';
import type { Dependencies } from '../../dependencies';
import { recordCryptoTransaction } from './cryptoTransactions';
import { createWatchedAddresses, type WatchedAddresses } from './watchedAddresses';

export interface ScanResult {
  cursor: BlockRef;
  /** The cursor reached the tip: the workflow sleeps one poll interval. */
  caughtUp: boolean;
  /** The node's tip height when the scan began (tip minus cursor is the watcher's lag). */
  tipHeight: number;
  pollMs: number;
  /** Chain payments recorded as crypto transactions by this scan. */
  recorded: number;
}

export interface ChainSettings {
  confirmations: number;
  pollSeconds: number;
}

export function chainSettings(config: Config, currency: CryptoCurrency): ChainSettings {
  return config.chains[currency];
}

/** Canonical key of an address as the node reports it, or null when it is not a valid address. */
function addressKeyOf(currency: CryptoCurrency, address: string): string | null {
  const checked = validateAddress(currency, address, 'test');
  return checked.ok ? checked.canonical : null;
}

const chainPaymentId = (currency: CryptoCurrency, p: Pick<ChainPayment, 'txHash' | 'outputIndex'>) => `${currency}:${p.txHash.toLowerCase()}:${p.outputIndex}`;

/** Notes a payment seen in a block (again): pending at this block, unless already recorded. */
async function notePayment(currency: CryptoCurrency, p: ChainPayment, addressKey: string): Promise<void> {
  const _id = chainPaymentId(currency, p);
  const existing = await ChainPaymentRecord.findById(_id).lean<ChainPaymentDoc>();
  if (existing?.status === 'recorded') return;
  const fields = {
    currency, tx_hash: p.txHash.toLowerCase(), output_index: p.outputIndex, to_address: p.toAddress, address_key: addressKey,
    amount: p.amount, from_address: p.fromAddress, block_height: p.block.height, block_hash: p.block.hash, timestamp: p.timestamp, status: 'pending' as const,
  };
  if (existing) {
    await ChainPaymentRecord.updateOne({ _id }, { $set: fields });
    return;
  }
  try {
    await ChainPaymentRecord.create({ _id, ...fields });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // a concurrent scan noted it first
  }
}

/** Steps 1 and 2: returns the new cursor. */
async function scanBlocks(client: ChainClient, settings: ChainSettings, cursor: BlockRef | null, tip: BlockRef, watchedAddresses: WatchedAddresses): Promise<BlockRef> {
  const currency = client.currency;
  let at: BlockRef;
  if (!cursor) {
    const height = initialCursorHeight(tip.height, settings.confirmations);
    at = { height, hash: height < 0 ? '' : (await client.blockHash(height)) ?? '' };
  } else if (cursor.height >= 0 && (await client.blockHash(cursor.height)) !== cursor.hash) {
    const height = rewoundCursorHeight(cursor, settings.confirmations);
    at = { height, hash: height < 0 ? '' : (await client.blockHash(height)) ?? '' };
  } else {
    at = cursor;
  }
  const range = nextScanRange(at.height, tip.height);
  if (!range) return at;
  const watched = await watchedAddresses.keys(currency);
  const keyOf = new Map<string, string | null>();
  const key = (address: string) => {
    if (!keyOf.has(address)) keyOf.set(address, addressKeyOf(currency, address));
    return keyOf.get(address) ?? null;
  };
  for (let height = range.from; height <= range.to; height++) {
    const { block, parentHash, payments } = await client.paymentsInBlock(height, (address) => {
      const k = key(address);
      return k !== null && watched.has(k);
    });
    // The chain changed under the scan (a reorg between two reads): keep what was scanned up to
    // here and let the next scan check the cursor again, which rewinds if needed.
    if (at.hash !== '' && parentHash !== null && parentHash !== at.hash) {
      throw new ChainUnavailableError(`${currency} block ${height} does not follow ${at.hash}: reorg during the scan`);
    }
    for (const p of payments) await notePayment(currency, p, key(p.toAddress)!);
    at = block;
  }
  return at;
}

/**
 * Steps 3 and 4 for every pending chain payment of the currency. A dropped one is not polled:
 * if its transaction is mined again, the scan of that block makes it pending again (a reorg
 * that replaced blocks at or below the cursor also moved the cursor back, step 1).
 */
async function settlePayments(deps: Dependencies, client: ChainClient, settings: ChainSettings, tip: BlockRef): Promise<number> {
  const currency = client.currency;
  const open = await ChainPaymentRecord.find({ currency, status: 'pending' }).lean<ChainPaymentDoc[]>();
  let recorded = 0;
  for (const p of open) {
    const placement = await client.placement(p.tx_hash);
    if (!placement) {
      // Only when its block really left the chain: a lagging node may not know the transaction yet.
      if ((await client.blockHash(p.block_height)) !== p.block_hash) await ChainPaymentRecord.updateOne({ _id: p._id }, { $set: { status: 'dropped' } });
      continue;
    }
    if (placement.block.hash !== p.block_hash) {
      await ChainPaymentRecord.updateOne({ _id: p._id }, { $set: { status: 'pending', block_height: placement.block.height, block_hash: placement.block.hash } });
    }
    if (confirmationsOf(Math.max(tip.height, placement.block.height), placement.block.height) < settings.confirmations) continue;
    recorded += await recordChainPayment(deps, p);
    await ChainPaymentRecord.updateOne({ _id: p._id }, { $set: { status: 'recorded', recorded_at: new Date() } });
  }
  return recorded;
}

/**
 * A final chain payment becomes a crypto transaction in each scope that holds the address (a
 * retry finds what exists). A transaction is recorded once per receiving address, so several
 * outputs of one transaction to the same address are recorded as one, with their sum.
 */
async function recordChainPayment(deps: Dependencies, p: ChainPaymentDoc): Promise<number> {
  const holders = await CryptoAddress.find({ currency: p.currency, address_key: p.address_key }).lean<CryptoAddressDoc[]>();
  const outputs = await ChainPaymentRecord.find({ currency: p.currency, tx_hash: p.tx_hash, address_key: p.address_key }).lean<ChainPaymentDoc[]>();
  // Written as precisely as the node wrote the outputs (BTC: always 8 decimals).
  const amount = formatCryptoAmount(p.currency, outputs.reduce((sum, o) => sum.plus(o.amount), new Dec(0)), Math.max(...outputs.map((o) => decimalPlacesOf(o.amount))));
  for (const address of holders) {
    await recordCryptoTransaction(
      deps,
      scopeOfDoc(address),
      { to_address_id: address._id, amount, currency_code: p.currency, transaction_id: p.tx_hash },
      { source: 'blockchain', timestamp: new Date(p.timestamp), senderAddress: p.from_address ?? null },
    );
  }
  return holders.length;
}

/**
 * One scan of the chain after `cursor` (null: the stored cursor, or near the tip). Idempotent.
 * `watched`: the process's copy of the watched addresses (a fresh one reads them all).
 */
export async function scanChain(deps: Dependencies, client: ChainClient, settings: ChainSettings, cursor: BlockRef | null, watched: WatchedAddresses = createWatchedAddresses()): Promise<ScanResult> {
  const currency = client.currency;
  if (!cursor) {
    const stored = await ChainCursor.findById(currency).lean<ChainCursorDoc>();
    if (stored) cursor = { height: stored.height, hash: stored.hash };
  }
  const tip = await client.tip();
  const next = await scanBlocks(client, settings, cursor, tip, watched);
  const recorded = await settlePayments(deps, client, settings, tip);
  // Written when it moved: an idle watcher polling every second should not keep the database busy.
  if (next.height !== cursor?.height || next.hash !== cursor?.hash) {
    await ChainCursor.updateOne({ _id: currency }, { $set: { height: next.height, hash: next.hash } }, { upsert: true });
  }
  return { cursor: next, caughtUp: next.height >= tip.height, tipHeight: tip.height, pollMs: settings.pollSeconds * 1000, recorded };
}

/** Starts the watcher workflow of every currency with a configured node (already running: left alone). */
export async function ensureChainWatchers(deps: Pick<Dependencies, 'config' | 'workflows'>): Promise<CryptoCurrency[]> {
  const currencies = watchedCurrencies(deps.config);
  for (const currency of currencies) await deps.workflows.chainWatcher.ensure(currency);
  return currencies;
}
