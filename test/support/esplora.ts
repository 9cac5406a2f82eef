/**
 * A fake Esplora (Blockstream electrs REST API) for tests: an in-memory Bitcoin chain with a
 * mempool, served over HTTP on 127.0.0.1 in Esplora's own response format (same routes,
 * status codes, text/JSON bodies and field names; values in satoshis). Scripts are derived
 * from the addresses (P2WPKH, P2WSH, P2TR, P2PKH, P2SH), signatures and hashes are random
 * bytes: nothing is validated as consensus would.
 *
 * Routes: GET /blocks/tip/height, /blocks/tip/hash, /block-height/:height, /block/:hash,
 * /block/:hash/status, /block/:hash/txids, /block/:hash/txs[/:start_index], /tx/:txid,
 * /tx/:txid/status, /mempool/txids. Blocks that were reorged out stay readable by hash (as in
 * electrs); their transactions then show `status: {confirmed: false}`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { bech32, bech32m, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2';

export type FakeNetwork = 'regtest' | 'mainnet';

export interface EsploraTxOut {
  scriptpubkey: string;
  scriptpubkey_asm: string;
  scriptpubkey_type: string;
  /** Absent for scripts without an address (OP_RETURN). */
  scriptpubkey_address?: string;
  value: number;
}

export interface EsploraTxIn {
  txid: string;
  vout: number;
  /** null for a coinbase input. */
  prevout: EsploraTxOut | null;
  scriptsig: string;
  scriptsig_asm: string;
  /** Absent when the input has no witness (legacy P2PKH), as in electrs. */
  witness?: string[];
  is_coinbase: boolean;
  sequence: number;
  inner_redeemscript_asm?: string;
  inner_witnessscript_asm?: string;
}

export interface EsploraTxStatus {
  confirmed: boolean;
  block_height?: number;
  block_hash?: string;
  block_time?: number;
}

/** A transaction as Esplora shows it, without `status` (that depends on where it is now). */
export interface FakeTx {
  txid: string;
  version: number;
  locktime: number;
  vin: EsploraTxIn[];
  vout: EsploraTxOut[];
  size: number;
  weight: number;
  fee: number;
}

export interface EsploraBlock {
  id: string;
  height: number;
  version: number;
  timestamp: number;
  tx_count: number;
  size: number;
  weight: number;
  merkle_root: string;
  previousblockhash: string | null;
  mediantime: number;
  nonce: number;
  bits: number;
  difficulty: number;
}

interface FakeBlock {
  header: EsploraBlock;
  txs: FakeTx[];
}

export interface FakeOutput {
  address: string;
  sats: number;
}

export interface FakeTxOptions {
  /** Sender address(es), one input each; a fresh P2WPKH address by default. */
  from?: string | string[];
  /** Change back to the first sender after the payment outputs; default a few mBTC, 0 for none. */
  changeSats?: number;
}

export interface MineOptions {
  /** Where the coinbase of the mined blocks pays to (default `minerAddress`). */
  coinbaseAddress?: string;
}

export interface ReorgOptions {
  /** Forget the transactions of the removed blocks instead of returning them to the mempool. */
  drop?: boolean;
}

/** A programmed failure: the next `count` requests whose path matches answer `status` with `body`. */
interface Failure {
  count: number;
  status: number;
  body: string;
  path?: string | RegExp;
}

/** Regtest genesis time; every block is 600 s after its parent. */
const START_TIME = 1_296_688_602;
const BLOCK_INTERVAL = 600;
const COIN = 100_000_000;
const SEQUENCE_FINAL = 0xffffffff;
const SEQUENCE_RBF = 0xfffffffd;
const ZERO_HASH = '0'.repeat(64);
const TXS_PER_PAGE = 25;

const NETWORKS: Record<FakeNetwork, { hrp: string; p2pkh: number; p2sh: number; bits: number; difficulty: number; halving: number }> = {
  regtest: { hrp: 'bcrt', p2pkh: 0x6f, p2sh: 0xc4, bits: 0x207fffff, difficulty: 4.656542373906925e-10, halving: 150 },
  mainnet: { hrp: 'bc', p2pkh: 0x00, p2sh: 0x05, bits: 0x17034219, difficulty: 126_411_437_451_912.2, halving: 210_000 },
};

const base58check = createBase58check(sha256);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const randomHex = (n: number) => randomBytes(n).toString('hex');
const push = (dataHex: string) => `OP_PUSHBYTES_${dataHex.length / 2} ${dataHex}`;
const pushOp = (dataHex: string) => (dataHex.length / 2).toString(16).padStart(2, '0') + dataHex;

/** A DER signature with SIGHASH_ALL (71 bytes) and a compressed public key (33 bytes), random. */
const fakeSignature = () => `30440220${randomHex(32)}0220${randomHex(32)}01`;
const fakePubkey = () => `0${2 + (randomBytes(1)[0] & 1)}${randomHex(32)}`;

interface Script {
  hex: string;
  asm: string;
  type: string;
}

/** The output script an address stands for. Undecodable strings get a P2WPKH script hashed from the text. */
export function scriptFor(address: string): Script {
  const lower = address.toLowerCase();
  if (/^(bc|tb|bcrt)1/.test(lower)) {
    const decoded = bech32.decodeUnsafe(lower, 90) ?? bech32m.decodeUnsafe(lower, 90);
    const program = decoded && decoded.words.length > 0 ? bech32.fromWordsUnsafe(decoded.words.slice(1)) : undefined;
    if (decoded && program) {
      const p = hex(program);
      const version = decoded.words[0];
      if (version === 0 && program.length === 20) return { hex: `0014${p}`, asm: `OP_0 ${push(p)}`, type: 'v0_p2wpkh' };
      if (version === 0 && program.length === 32) return { hex: `0020${p}`, asm: `OP_0 ${push(p)}`, type: 'v0_p2wsh' };
      if (version === 1 && program.length === 32) return { hex: `5120${p}`, asm: `OP_PUSHNUM_1 ${push(p)}`, type: 'v1_p2tr' };
    }
  } else {
    try {
      const payload = base58check.decode(address);
      const h = hex(payload.slice(1));
      if (payload.length === 21 && (payload[0] === 0x00 || payload[0] === 0x6f)) {
        return { hex: `76a914${h}88ac`, asm: `OP_DUP OP_HASH160 ${push(h)} OP_EQUALVERIFY OP_CHECKSIG`, type: 'p2pkh' };
      }
      if (payload.length === 21 && (payload[0] === 0x05 || payload[0] === 0xc4)) {
        return { hex: `a914${h}87`, asm: `OP_HASH160 ${push(h)} OP_EQUAL`, type: 'p2sh' };
      }
    } catch {
      // Not base58check: fall through to the made-up script.
    }
  }
  const p = createHash('sha256').update(address).digest('hex').slice(0, 40);
  return { hex: `0014${p}`, asm: `OP_0 ${push(p)}`, type: 'v0_p2wpkh' };
}

function output(address: string, sats: number): EsploraTxOut {
  if (!Number.isSafeInteger(sats) || sats < 0) throw new RangeError(`not a satoshi amount: ${sats}`);
  const s = scriptFor(address);
  return { scriptpubkey: s.hex, scriptpubkey_asm: s.asm, scriptpubkey_type: s.type, scriptpubkey_address: address, value: sats };
}

/** An input spending `prevout`, with the scriptSig/witness its script type needs (keys in electrs' order). */
function input(prevout: EsploraTxOut): EsploraTxIn {
  const sig = fakeSignature();
  const pk = fakePubkey();
  const make = (scriptsig: string, scriptsig_asm: string, witness?: string[], inner: Partial<EsploraTxIn> = {}): EsploraTxIn => ({
    txid: randomHex(32),
    vout: randomBytes(1)[0] % 3,
    prevout,
    scriptsig,
    scriptsig_asm,
    ...(witness ? { witness } : {}),
    is_coinbase: false,
    sequence: SEQUENCE_RBF,
    ...inner,
  });
  switch (prevout.scriptpubkey_type) {
    case 'p2pkh':
      return make(pushOp(sig) + pushOp(pk), `${push(sig)} ${push(pk)}`);
    case 'p2sh': {
      // P2SH-wrapped P2WPKH, the common case.
      const redeem = `0014${randomHex(20)}`;
      return make(pushOp(redeem), push(redeem), [sig, pk], { inner_redeemscript_asm: `OP_0 ${push(redeem.slice(4))}` });
    }
    case 'v0_p2wsh': {
      const script = `${pushOp(pk)}ac`;
      return make('', '', [sig, script], { inner_witnessscript_asm: `${push(pk)} OP_CHECKSIG` });
    }
    case 'v1_p2tr':
      return make('', '', [randomHex(64)]);
    default:
      return make('', '', [sig, pk]);
  }
}

const varintSize = (n: number) => (n < 0xfd ? 1 : n <= 0xffff ? 3 : 5);

/** Serialized size and weight (BIP-141) of a transaction from its scripts and witnesses. */
function sizeOf(vin: EsploraTxIn[], vout: EsploraTxOut[]): { size: number; weight: number } {
  let base = 4 + varintSize(vin.length) + varintSize(vout.length) + 4;
  for (const i of vin) base += 32 + 4 + varintSize(i.scriptsig.length / 2) + i.scriptsig.length / 2 + 4;
  for (const o of vout) base += 8 + varintSize(o.scriptpubkey.length / 2) + o.scriptpubkey.length / 2;
  let witness = 0;
  if (vin.some((i) => i.witness)) {
    witness = 2;
    for (const i of vin) {
      const items = i.witness ?? [];
      witness += varintSize(items.length);
      for (const item of items) witness += varintSize(item.length / 2) + item.length / 2;
    }
  }
  return { size: base + witness, weight: base * 4 + witness };
}

/** BIP-34 height as Bitcoin Core's coinbase puts it (`CScript() << height << OP_0`). */
function coinbaseScriptSig(height: number): { hex: string; asm: string } {
  if (height === 0) return { hex: '0000', asm: 'OP_0 OP_0' };
  if (height <= 16) return { hex: `${(0x50 + height).toString(16)}00`, asm: `OP_PUSHNUM_${height} OP_0` };
  const bytes: number[] = [];
  for (let n = height; n > 0; n = Math.floor(n / 256)) bytes.push(n % 256);
  if (bytes[bytes.length - 1] & 0x80) bytes.push(0);
  const num = hex(Uint8Array.from(bytes));
  return { hex: `${pushOp(num)}00`, asm: `${push(num)} OP_0` };
}

export class FakeEsplora {
  /** The best chain, index = height. */
  private chain: FakeBlock[] = [];
  /** Every block ever mined, reorged-out ones included. */
  private readonly blocks = new Map<string, FakeBlock>();
  /** Active-chain height of each confirmed txid. */
  private readonly confirmed = new Map<string, number>();
  private mempool: FakeTx[] = [];
  private failures: Failure[] = [];
  private server!: http.Server;
  private readonly net: (typeof NETWORKS)[FakeNetwork];
  /** Every request path served, in order (for assertions on pagination and such). */
  readonly requests: string[] = [];
  /** Extra latency of every answer, ms (timeout tests). */
  delayMs = 0;
  /** Awaited before each answer is computed: a test can change the chain in the middle of a scan. */
  beforeAnswer: ((path: string) => void | Promise<void>) | null = null;
  /** Where coinbases pay to by default. */
  readonly minerAddress: string;
  url = '';

  private constructor(readonly network: FakeNetwork) {
    this.net = NETWORKS[network];
    this.minerAddress = this.newAddress();
    this.chain.push(this.makeBlock(0, [], this.minerAddress));
    this.index();
  }

  /** A fake chain holding the genesis block only (height 0), listening on a free port of 127.0.0.1. */
  static async start(opts: { network?: FakeNetwork } = {}): Promise<FakeEsplora> {
    const fake = new FakeEsplora(opts.network ?? 'regtest');
    fake.server = http.createServer((req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      fake.server.once('error', reject);
      fake.server.listen(0, '127.0.0.1', () => resolve());
    });
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Keep-alive connections of fetch would hold close() open.
    this.server.closeAllConnections();
    await closed;
  }

  // ---- the chain ----

  get height(): number {
    return this.chain.length - 1;
  }

  get tipHash(): string {
    return this.chain[this.height].header.id;
  }

  /** Hash of the best chain's block at `height` (undefined above the tip). */
  hashAt(height: number): string | undefined {
    return this.chain[height]?.header.id;
  }

  /** Header of the block at `height` of the best chain. */
  blockAt(height: number): EsploraBlock | undefined {
    return this.chain[height] && { ...this.chain[height].header };
  }

  /** A fresh random address of this network: P2WPKH by default. */
  newAddress(kind: 'p2wpkh' | 'p2wsh' | 'p2tr' | 'p2pkh' | 'p2sh' = 'p2wpkh'): string {
    switch (kind) {
      case 'p2wpkh':
        return bech32.encode(this.net.hrp, [0, ...bech32.toWords(randomBytes(20))]);
      case 'p2wsh':
        return bech32.encode(this.net.hrp, [0, ...bech32.toWords(randomBytes(32))]);
      case 'p2tr':
        return bech32m.encode(this.net.hrp, [1, ...bech32m.toWords(randomBytes(32))]);
      case 'p2pkh':
        return base58check.encode(Uint8Array.from([this.net.p2pkh, ...randomBytes(20)]));
      case 'p2sh':
        return base58check.encode(Uint8Array.from([this.net.p2sh, ...randomBytes(20)]));
    }
  }

  /**
   * A transaction paying `outputs` (in that order, vout 0..n-1), then change to the first
   * sender. Not broadcast: give it to `mine`, or use `pay`/`send` for the mempool.
   */
  tx(outputs: FakeOutput[], opts: FakeTxOptions = {}): FakeTx {
    if (outputs.length === 0) throw new Error('a transaction needs outputs');
    const senders = opts.from === undefined ? [this.newAddress()] : Array.isArray(opts.from) ? opts.from : [opts.from];
    if (senders.length === 0) throw new Error('a transaction needs inputs');
    const change = opts.changeSats ?? 100_000 + (randomBytes(2).readUInt16BE() * 37);
    const vout = outputs.map((o) => output(o.address, o.sats));
    if (change > 0) vout.push(output(senders[0], change));
    // Input values are set once the size (hence the fee at 2 sat/vB) is known; sizes do not depend on them.
    const vin = senders.map((a) => input(output(a, 0)));
    const { size, weight } = sizeOf(vin, vout);
    const fee = Math.ceil(weight / 4) * 2;
    const total = vout.reduce((sum, o) => sum + o.value, 0) + fee;
    const each = Math.floor(total / vin.length);
    vin.forEach((i, n) => (i.prevout!.value = n === vin.length - 1 ? total - each * (vin.length - 1) : each));
    return { txid: randomHex(32), version: 2, locktime: this.height, vin, vout, size, weight, fee };
  }

  /** Broadcasts a payment of `sats` to `toAddress` (vout 0); returns its txid. */
  pay(toAddress: string, sats: number, opts: FakeTxOptions = {}): string {
    return this.send([{ address: toAddress, sats }], opts);
  }

  /** Broadcasts a transaction paying `outputs` (vout 0..n-1); returns its txid. */
  send(outputs: FakeOutput[], opts: FakeTxOptions = {}): string {
    return this.broadcast(this.tx(outputs, opts));
  }

  /** Puts `tx` in the mempool; returns its txid. */
  broadcast(tx: FakeTx): string {
    if (this.confirmed.has(tx.txid) || this.mempool.some((t) => t.txid === tx.txid)) throw new Error(`tx ${tx.txid} is already known`);
    this.mempool.push(tx);
    return tx.txid;
  }

  /** The transaction as Esplora's `GET /tx/:txid` shows it (with its status), or undefined. */
  transaction(txid: string): (FakeTx & { status: EsploraTxStatus }) | undefined {
    const tx = this.findTx(txid);
    return tx && { ...tx, status: this.statusOf(txid) };
  }

  get mempoolTxids(): string[] {
    return this.mempool.map((t) => t.txid);
  }

  /**
   * Mines `count` blocks: the first holds the mempool, then `txs`; the others only a coinbase.
   * Returns the new blocks' hashes.
   */
  mine(count = 1, txs: FakeTx[] = [], opts: MineOptions = {}): string[] {
    const hashes: string[] = [];
    for (let n = 0; n < count; n++) {
      const pooled = new Set(this.mempool.map((t) => t.txid));
      const included = n === 0 ? [...this.mempool, ...txs.filter((t) => !pooled.has(t.txid))] : [];
      hashes.push(this.append(included, opts.coinbaseAddress));
      if (n === 0) this.mempool = [];
    }
    return hashes;
  }

  /**
   * Replaces the last `depth` blocks with new ones (new hashes; `replacementBlocks` of them,
   * default `depth`, each with only a coinbase; or one per given list of transactions). The
   * removed blocks' transactions go back to the mempool unless `drop` is set (then they vanish,
   * as a double-spent payment would). Returns the new blocks' hashes.
   */
  reorg(depth: number, replacementBlocks?: number | FakeTx[][] | ReorgOptions, opts: ReorgOptions = {}): string[] {
    if (replacementBlocks !== undefined && typeof replacementBlocks === 'object' && !Array.isArray(replacementBlocks)) {
      opts = replacementBlocks;
      replacementBlocks = undefined;
    }
    if (!Number.isInteger(depth) || depth < 1 || depth > this.height) throw new RangeError(`cannot reorg ${depth} blocks of a chain of height ${this.height}`);
    const removed = this.chain.splice(this.chain.length - depth, depth);
    this.index();
    const returned = opts.drop ? [] : removed.flatMap((b) => b.txs.slice(1));
    this.mempool = [...returned, ...this.mempool];
    const lists: FakeTx[][] = Array.isArray(replacementBlocks)
      ? replacementBlocks
      : Array.from({ length: replacementBlocks ?? depth }, () => []);
    return lists.map((txs) => {
      const ids = new Set(txs.map((t) => t.txid));
      this.mempool = this.mempool.filter((t) => !ids.has(t.txid));
      return this.append(txs);
    });
  }

  /** The next `count` requests (whose path matches `path`, if given) answer `status` (500 by default). */
  failNext(count = 1, opts: { status?: number; body?: string; path?: string | RegExp } = {}): void {
    this.failures.push({ count, status: opts.status ?? 500, body: opts.body ?? 'Internal Server Error', path: opts.path });
  }

  private append(txs: FakeTx[], coinbaseAddress?: string): string {
    for (const tx of txs) {
      if (this.confirmed.has(tx.txid)) throw new Error(`tx ${tx.txid} is already in the chain`);
    }
    const block = this.makeBlock(this.height + 1, txs, coinbaseAddress ?? this.minerAddress);
    this.chain.push(block);
    this.index();
    return block.header.id;
  }

  private makeBlock(height: number, txs: FakeTx[], coinbaseAddress: string): FakeBlock {
    const fees = txs.reduce((sum, t) => sum + t.fee, 0);
    const subsidy = Math.floor((50 * COIN) / 2 ** Math.floor(height / this.net.halving));
    const all = [this.coinbase(height, subsidy + fees, coinbaseAddress), ...txs];
    const timestamp = START_TIME + height * BLOCK_INTERVAL;
    const recent = [timestamp, ...this.chain.slice(Math.max(0, height - 10), height).map((b) => b.header.timestamp)].sort((a, b) => a - b);
    const header: EsploraBlock = {
      id: randomHex(32),
      height,
      version: 0x20000000,
      timestamp,
      tx_count: all.length,
      size: 80 + varintSize(all.length) + all.reduce((sum, t) => sum + t.size, 0),
      weight: 320 + 4 * varintSize(all.length) + all.reduce((sum, t) => sum + t.weight, 0),
      merkle_root: randomHex(32),
      previousblockhash: height === 0 ? null : this.chain[height - 1].header.id,
      mediantime: recent[Math.floor(recent.length / 2)],
      nonce: randomBytes(4).readUInt32BE(),
      bits: this.net.bits,
      difficulty: this.net.difficulty,
    };
    const block = { header, txs: all };
    this.blocks.set(header.id, block);
    return block;
  }

  /** Coinbase: the reward to `address`, then the segwit witness commitment (OP_RETURN, no address). */
  private coinbase(height: number, reward: number, address: string): FakeTx {
    const sig = coinbaseScriptSig(height);
    const commitment = `aa21a9ed${randomHex(32)}`;
    const vin: EsploraTxIn[] = [{
      txid: ZERO_HASH, vout: 0xffffffff, prevout: null, scriptsig: sig.hex, scriptsig_asm: sig.asm,
      witness: [ZERO_HASH], is_coinbase: true, sequence: SEQUENCE_FINAL,
    }];
    const vout: EsploraTxOut[] = [
      output(address, reward),
      { scriptpubkey: `6a24${commitment}`, scriptpubkey_asm: `OP_RETURN ${push(commitment)}`, scriptpubkey_type: 'op_return', value: 0 },
    ];
    return { txid: randomHex(32), version: 2, locktime: 0, vin, vout, ...sizeOf(vin, vout), fee: 0 };
  }

  private index(): void {
    this.confirmed.clear();
    for (const b of this.chain) for (const t of b.txs) this.confirmed.set(t.txid, b.header.height);
  }

  private findTx(txid: string): FakeTx | undefined {
    const height = this.confirmed.get(txid);
    if (height !== undefined) return this.chain[height].txs.find((t) => t.txid === txid);
    return this.mempool.find((t) => t.txid === txid);
  }

  private statusOf(txid: string): EsploraTxStatus {
    const height = this.confirmed.get(txid);
    if (height === undefined) return { confirmed: false };
    const { id, timestamp } = this.chain[height].header;
    return { confirmed: true, block_height: height, block_hash: id, block_time: timestamp };
  }

  private inBestChain(block: FakeBlock): boolean {
    return this.chain[block.header.height] === block;
  }

  // ---- HTTP ----

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    this.requests.push(path);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.beforeAnswer) await this.beforeAnswer(path);
      const failure = this.failures.find((f) => f.path === undefined || (typeof f.path === 'string' ? f.path === path : f.path.test(path)));
      if (failure) {
        if (--failure.count <= 0) this.failures = this.failures.filter((f) => f !== failure);
        return this.text(res, failure.status, failure.body);
      }
      if (req.method !== 'GET') return this.text(res, 404, `endpoint does not exist ${JSON.stringify(path)}`);
      this.route(path, res);
    } catch (err) {
      if (!res.headersSent) this.text(res, 500, (err as Error).message);
    }
  }

  private route(path: string, res: http.ServerResponse): void {
    const p = path.split('/').slice(1);
    const isHash = (s: string | undefined) => s !== undefined && /^[0-9a-fA-F]{64}$/.test(s);
    const notFound = () => this.text(res, 404, `endpoint does not exist ${JSON.stringify(path)}`);

    if (p[0] === 'blocks' && p[1] === 'tip' && p.length === 3) {
      if (p[2] === 'height') return this.text(res, 200, String(this.height));
      if (p[2] === 'hash') return this.text(res, 200, this.tipHash);
      return notFound();
    }
    if (p[0] === 'block-height' && p.length === 2) {
      if (!/^[0-9]+$/.test(p[1])) return this.text(res, 400, 'Invalid number');
      const hash = this.hashAt(Number(p[1]));
      return hash ? this.text(res, 200, hash) : this.text(res, 404, 'Block not found');
    }
    if (p[0] === 'block' && p.length >= 2 && p.length <= 4) {
      if (!isHash(p[1])) return this.text(res, 400, 'Invalid hash string');
      const block = this.blocks.get(p[1].toLowerCase());
      if (!block) return this.text(res, 404, 'Block not found');
      if (p.length === 2) return this.json(res, block.header);
      if (p[2] === 'status' && p.length === 3) {
        const best = this.inBestChain(block);
        const next = best ? this.chain[block.header.height + 1]?.header.id : undefined;
        return this.json(res, best ? { in_best_chain: true, height: block.header.height, next_best: next ?? null } : { in_best_chain: false });
      }
      if (p[2] === 'txids' && p.length === 3) return this.json(res, block.txs.map((t) => t.txid));
      if (p[2] === 'txs') {
        // Like electrs: a missing or unparsable start is 0; it must be a multiple of the page size.
        const start = p[3] !== undefined && /^[0-9]+$/.test(p[3]) ? Number(p[3]) : 0;
        if (start % TXS_PER_PAGE !== 0) return this.text(res, 400, `start index must be a multiple of ${TXS_PER_PAGE}`);
        if (start >= block.txs.length) return this.text(res, 400, 'start index out of range');
        // Statuses are relative to the best chain: unconfirmed for a block that was reorged out.
        const status: EsploraTxStatus = this.inBestChain(block)
          ? { confirmed: true, block_height: block.header.height, block_hash: block.header.id, block_time: block.header.timestamp }
          : { confirmed: false };
        return this.json(res, block.txs.slice(start, start + TXS_PER_PAGE).map((t) => ({ ...t, status })));
      }
      return notFound();
    }
    if (p[0] === 'tx' && (p.length === 2 || (p.length === 3 && p[2] === 'status'))) {
      if (!isHash(p[1])) return this.text(res, 400, 'Invalid hash string');
      const txid = p[1].toLowerCase();
      const tx = this.findTx(txid);
      if (!tx) return this.text(res, 404, 'Transaction not found');
      return this.json(res, p.length === 2 ? { ...tx, status: this.statusOf(txid) } : this.statusOf(txid));
    }
    if (p[0] === 'mempool' && p[1] === 'txids' && p.length === 2) return this.json(res, this.mempoolTxids);
    return notFound();
  }

  private text(res: http.ServerResponse, status: number, body: string): void {
    res.writeHead(status, { 'Content-Type': 'text/plain', 'Cache-Control': 'public, max-age=10' });
    res.end(body);
  }

  private json(res: http.ServerResponse, value: unknown): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=10' });
    res.end(JSON.stringify(value));
  }
}
