/**
 * What the on-chain watcher needs from a node, per currency. Implementations do HTTP only
 * (JSON-RPC for ETH, Esplora for BTC); matching, confirmations and reorgs are decided by the
 * watcher (services/crypto/chainWatcher.ts) from these answers.
 */
import type { CryptoCurrency } from '../cryptocurrency/addresses';

export interface BlockRef {
  height: number;
  hash: string;
}

/** One payment output seen in a block: `amount` coin units to `toAddress`. */
export interface ChainPayment {
  txHash: string;
  /** Output index (BTC vout; 0 for ETH, one value transfer per transaction). */
  outputIndex: number;
  /** As the node reports it. */
  toAddress: string;
  /** Coin units as a plain decimal string (BTC up to 8 decimals, ETH up to 18). */
  amount: string;
  /** The sender when it is one address (ETH `from`; BTC: all inputs from one address), else null. */
  fromAddress: string | null;
  block: BlockRef;
  /** Block time. */
  timestamp: Date;
}

/** Where a transaction is now: in a block of the best chain, or not (reorged out, dropped, still in the mempool). */
export type TxPlacement = { block: BlockRef } | null;

export interface BlockPayments {
  block: BlockRef;
  /** The previous block's hash (null for the genesis block): the scan checks the blocks it reads form one chain. */
  parentHash: string | null;
  payments: ChainPayment[];
}

export interface ChainClient {
  readonly currency: CryptoCurrency;
  /** The best chain's tip. */
  tip(): Promise<BlockRef>;
  /** Hash of the best chain's block at `height`, null above the tip. */
  blockHash(height: number): Promise<string | null>;
  /**
   * Payments in the block at `height` to an address for which `isWatched` is true (it is
   * given the address as the node reports it). Failed transactions are not payments.
   */
  paymentsInBlock(height: number, isWatched: (address: string) => boolean): Promise<BlockPayments>;
  /** Where transaction `txHash` is now in the best chain. */
  placement(txHash: string): Promise<TxPlacement>;
}

/** The node could not be reached or answered nonsense: the activity fails and Temporal retries it. */
export class ChainUnavailableError extends Error {}
