/**
 * Bitcoin over an Esplora REST API (Blockstream electrs / mempool.space): payments to watched
 * addresses are the outputs (vouts) of a block's transactions, read 25 at a time from
 * `/block/:hash/txs/:start_index`. Values come in satoshis and are turned into BTC decimal
 * strings with integer/string math only. Plain `fetch` and no Node modules, so this file
 * also runs under Deno.
 */
import { BlockPayments, BlockRef, ChainClient, ChainPayment, ChainUnavailableError, TxPlacement } from './types';

/** Esplora's fixed page size for a block's transactions (start_index must be a multiple of it). */
const TXS_PER_PAGE = 25;
/** Pages of one block fetched at the same time: fast on big blocks, gentle on public servers. */
const PAGE_CONCURRENCY = 4;
const SATS_PER_BTC_DIGITS = 8;

const HASH_RE = /^[0-9a-f]{64}$/;

export interface EsploraClientOptions {
  /** Per request, body included (default 10 s). */
  timeoutMs?: number;
  /** Another fetch implementation (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
}

/** Satoshis as a BTC decimal string with exactly 8 decimals: 150000000 -> "1.50000000". */
export function satsToBtc(sats: number): string {
  if (!Number.isSafeInteger(sats) || sats < 0) throw new RangeError(`not a satoshi amount: ${sats}`);
  const digits = String(sats).padStart(SATS_PER_BTC_DIGITS + 1, '0');
  return `${digits.slice(0, -SATS_PER_BTC_DIGITS)}.${digits.slice(-SATS_PER_BTC_DIGITS)}`;
}

// The parts of Esplora's answers this client reads (everything else is ignored).
interface EsploraOut {
  scriptpubkey_address?: string;
  value: number;
}
interface EsploraIn {
  is_coinbase: boolean;
  prevout: EsploraOut | null;
}
interface EsploraTx {
  txid: string;
  vin: EsploraIn[];
  vout: EsploraOut[];
  status?: { confirmed: boolean; block_hash?: string };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isHeight = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isHash = (v: unknown): v is string => typeof v === 'string' && HASH_RE.test(v);

function isOut(v: unknown): v is EsploraOut {
  return isObject(v) && isHeight(v.value) && (v.scriptpubkey_address === undefined || typeof v.scriptpubkey_address === 'string');
}

function isTx(v: unknown): v is EsploraTx {
  if (!isObject(v) || !isHash(v.txid) || !Array.isArray(v.vin) || !Array.isArray(v.vout)) return false;
  if (!v.vout.every(isOut)) return false;
  if (!v.vin.every((i) => isObject(i) && typeof i.is_coinbase === 'boolean' && (i.prevout === null || i.prevout === undefined || isOut(i.prevout)))) return false;
  return v.status === undefined || (isObject(v.status) && typeof v.status.confirmed === 'boolean');
}

/** The one address all spent outputs came from; null for a coinbase, mixed or unknown senders. */
function senderOf(tx: EsploraTx): string | null {
  let sender: string | null = null;
  for (const input of tx.vin) {
    if (input.is_coinbase) continue;
    const address = input.prevout?.scriptpubkey_address;
    if (address === undefined) return null;
    if (sender !== null && sender !== address) return null;
    sender = address;
  }
  return sender;
}

/** Runs `tasks` with at most `limit` in flight; rejects with the first failure and starts no new task after it. */
async function pooled<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < tasks.length) {
      const i = next++;
      try {
        results[i] = await tasks[i]();
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

export class EsploraClient implements ChainClient {
  readonly currency = 'BTC' as const;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch | undefined;

  constructor(baseUrl: string, opts: EsploraClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.fetchImpl = opts.fetch;
  }

  /**
   * GET `path`: the body as text, or null on a 404 when `notFoundIsNull`. Anything else that is
   * not a 2xx (5xx, 429, an unexpected 4xx) is the node's trouble: ChainUnavailableError.
   */
  private async get(path: string, notFoundIsNull = false): Promise<string | null> {
    // Called unbound: browsers and Deno refuse a fetch whose `this` is not the global scope.
    const doFetch = this.fetchImpl ?? fetch;
    let res: Response;
    let body: string;
    try {
      res = await doFetch(`${this.baseUrl}${path}`, { signal: AbortSignal.timeout(this.timeoutMs) });
      body = await res.text();
    } catch (err) {
      throw new ChainUnavailableError(`Esplora GET ${path} failed: ${(err as Error).message}`);
    }
    if (res.status === 404 && notFoundIsNull) return null;
    if (!res.ok) throw new ChainUnavailableError(`Esplora GET ${path} answered ${res.status}: ${body.slice(0, 200)}`);
    return body;
  }

  private async getJson(path: string, notFoundIsNull = false): Promise<unknown> {
    const body = await this.get(path, notFoundIsNull);
    if (body === null) return null;
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new ChainUnavailableError(`Esplora GET ${path} answered no JSON: ${body.slice(0, 200)}`);
    }
  }

  private async getHash(path: string, notFoundIsNull = false): Promise<string | null> {
    const body = await this.get(path, notFoundIsNull);
    if (body === null) return null;
    const hash = body.trim();
    if (!HASH_RE.test(hash)) throw new ChainUnavailableError(`Esplora GET ${path} answered no block hash: ${body.slice(0, 200)}`);
    return hash;
  }

  /** The header of block `hash`: its height and time (seconds), and how many transactions it has. */
  private async header(hash: string): Promise<{ height: number; timestamp: number; txCount: number; parentHash: string | null }> {
    const path = `/block/${hash}`;
    const block = await this.getJson(path);
    if (!isObject(block) || block.id !== hash || !isHeight(block.height) || !isHeight(block.timestamp) || !isHeight(block.tx_count) || block.tx_count < 1) {
      throw new ChainUnavailableError(`Esplora GET ${path} answered no block header`);
    }
    const parentHash = typeof block.previousblockhash === 'string' ? block.previousblockhash : null;
    return { height: block.height, timestamp: block.timestamp, txCount: block.tx_count, parentHash };
  }

  async tip(): Promise<BlockRef> {
    // By hash first: the height read from that block's header always belongs to the same block.
    const hash = (await this.getHash('/blocks/tip/hash'))!;
    const { height } = await this.header(hash);
    return { height, hash };
  }

  async blockHash(height: number): Promise<string | null> {
    if (!isHeight(height)) throw new RangeError(`invalid block height ${height}`);
    return this.getHash(`/block-height/${height}`, true);
  }

  async paymentsInBlock(height: number, isWatched: (address: string) => boolean): Promise<BlockPayments> {
    const hash = await this.blockHash(height);
    // The watcher only asks for heights it saw under the tip: a missing block means the chain just got shorter.
    if (hash === null) throw new ChainUnavailableError(`Esplora has no block at height ${height} (reorg?)`);
    const header = await this.header(hash);
    if (header.height !== height) throw new ChainUnavailableError(`Esplora block ${hash} is at height ${header.height}, not ${height}`);
    const block: BlockRef = { height, hash };
    const timestamp = new Date(header.timestamp * 1000);

    const starts: number[] = [];
    for (let start = 0; start < header.txCount; start += TXS_PER_PAGE) starts.push(start);
    const pages = await pooled(starts.map((start) => () => this.txPage(block, start, Math.min(TXS_PER_PAGE, header.txCount - start))), PAGE_CONCURRENCY);

    const payments: ChainPayment[] = [];
    for (const tx of pages.flat()) {
      let fromAddress: string | null | undefined;
      for (let outputIndex = 0; outputIndex < tx.vout.length; outputIndex++) {
        const out = tx.vout[outputIndex];
        // No address: OP_RETURN, bare multisig and other non-standard scripts. Zero value: not a payment.
        if (out.scriptpubkey_address === undefined || out.value === 0 || !isWatched(out.scriptpubkey_address)) continue;
        if (fromAddress === undefined) fromAddress = senderOf(tx);
        payments.push({
          txHash: tx.txid,
          outputIndex,
          toAddress: out.scriptpubkey_address,
          amount: satsToBtc(out.value),
          fromAddress,
          block,
          timestamp,
        });
      }
    }

    // A block replaced while its pages were read would mix two blocks: let the caller retry.
    const hashNow = await this.blockHash(height);
    if (hashNow !== hash) throw new ChainUnavailableError(`Esplora block at height ${height} changed during the scan (${hash} -> ${hashNow})`);
    return { block, parentHash: header.parentHash, payments };
  }

  /** One page of block `block`'s transactions, which must hold exactly `expected` of them. */
  private async txPage(block: BlockRef, start: number, expected: number): Promise<EsploraTx[]> {
    const path = `/block/${block.hash}/txs/${start}`;
    const txs = await this.getJson(path);
    if (!Array.isArray(txs) || !txs.every(isTx)) throw new ChainUnavailableError(`Esplora GET ${path} answered no transaction list`);
    if (txs.length !== expected) throw new ChainUnavailableError(`Esplora GET ${path} answered ${txs.length} transactions, expected ${expected}`);
    // The status is relative to the best chain: unconfirmed here means the block was just reorged out.
    for (const tx of txs) {
      if (tx.status && !(tx.status.confirmed && tx.status.block_hash === block.hash)) {
        throw new ChainUnavailableError(`Esplora block ${block.hash} left the best chain during the scan`);
      }
    }
    return txs;
  }

  async placement(txHash: string): Promise<TxPlacement> {
    const txid = txHash.toLowerCase();
    // Not a txid at all: it cannot be in any block (and Esplora would answer 400).
    if (!HASH_RE.test(txid)) return null;
    const path = `/tx/${txid}/status`;
    const status = await this.getJson(path, true);
    if (status === null) return null;
    if (!isObject(status) || typeof status.confirmed !== 'boolean') throw new ChainUnavailableError(`Esplora GET ${path} answered no status`);
    if (!status.confirmed) return null;
    if (!isHeight(status.block_height) || !isHash(status.block_hash)) throw new ChainUnavailableError(`Esplora GET ${path} answered a confirmed status without its block`);
    return { block: { height: status.block_height, hash: status.block_hash } };
  }
}
