/**
 * EsploraClient against FakeEsplora (Esplora's real routes and JSON, over HTTP on 127.0.0.1).
 */
import { EsploraClient, satsToBtc } from '../../src/chains/esplora';
import { ChainUnavailableError } from '../../src/chains/types';
import { FakeEsplora } from '../support/esplora';

let fake: FakeEsplora;
let client: EsploraClient;

beforeEach(async () => {
  fake = await FakeEsplora.start();
  client = new EsploraClient(fake.url, { timeoutMs: 2_000 });
});

afterEach(async () => {
  await fake.close();
});

const watching = (...addresses: string[]) => {
  const set = new Set(addresses);
  return (a: string) => set.has(a);
};

describe('satsToBtc', () => {
  it('writes exactly 8 decimals with integer math', () => {
    expect(satsToBtc(0)).toBe('0.00000000');
    expect(satsToBtc(1)).toBe('0.00000001');
    expect(satsToBtc(99_999_999)).toBe('0.99999999');
    expect(satsToBtc(100_000_000)).toBe('1.00000000');
    expect(satsToBtc(150_000_000)).toBe('1.50000000');
    expect(satsToBtc(2_100_000_000_000_000)).toBe('21000000.00000000');
    expect(() => satsToBtc(1.5)).toThrow(RangeError);
    expect(() => satsToBtc(-1)).toThrow(RangeError);
  });
});

describe('EsploraClient: tip and block hashes', () => {
  it('reads the tip as a consistent height and hash', async () => {
    expect(await client.tip()).toEqual({ height: 0, hash: fake.hashAt(0) });
    fake.mine(3);
    expect(await client.tip()).toEqual({ height: 3, hash: fake.hashAt(3) });
    expect(fake.requests.slice(-2)).toEqual(['/blocks/tip/hash', `/block/${fake.hashAt(3)}`]);
  });

  it('gives the hash at a height, null above the tip', async () => {
    fake.mine(2);
    expect(await client.blockHash(0)).toBe(fake.hashAt(0));
    expect(await client.blockHash(2)).toBe(fake.hashAt(2));
    expect(await client.blockHash(3)).toBeNull();
    expect(await client.blockHash(1_000_000)).toBeNull();
  });

  it('follows a reorg', async () => {
    fake.mine(3);
    const before = fake.hashAt(3);
    fake.reorg(2, 3);
    expect(await client.blockHash(3)).not.toBe(before);
    expect(await client.blockHash(3)).toBe(fake.hashAt(3));
    expect(await client.tip()).toEqual({ height: 4, hash: fake.hashAt(4) });
  });
});

describe('EsploraClient.paymentsInBlock', () => {
  it('pages through a block of more than 25 transactions and finds watched outputs in every page', async () => {
    const watched = [fake.newAddress(), fake.newAddress('p2tr'), fake.newAddress('p2pkh')];
    // 59 payments + the coinbase = 60 transactions: pages at 0, 25 and 50.
    const expected: { txid: string; address: string; sats: number }[] = [];
    for (let i = 0; i < 59; i++) {
      const isWatched = i % 10 === 3;
      const address = isWatched ? watched[i % watched.length] : fake.newAddress();
      const sats = 10_000 + i;
      const txid = fake.pay(address, sats);
      if (isWatched) expected.push({ txid, address, sats });
    }
    const [hash] = fake.mine();
    expect(fake.blockAt(1)!.tx_count).toBe(60);

    const seen: string[] = [];
    const { block, payments } = await client.paymentsInBlock(1, (a) => {
      seen.push(a);
      return watched.includes(a);
    });

    expect(block).toEqual({ height: 1, hash });
    expect(payments.map((p) => [p.txHash, p.toAddress, p.amount, p.outputIndex])).toEqual(
      expected.map((e) => [e.txid, e.address, satsToBtc(e.sats), 0]),
    );
    // Watched outputs in each of the three pages (transaction indexes 4, 14, ..., 54).
    expect(expected.length).toBe(6);
    expect(new Set(fake.requests.filter((r) => r.includes('/txs/')))).toEqual(
      new Set([`/block/${hash}/txs/0`, `/block/${hash}/txs/25`, `/block/${hash}/txs/50`]),
    );
    // The OP_RETURN output of the coinbase has no address and is never offered.
    expect(seen.length).toBe(1 + 59 * 2);
    for (const p of payments) {
      expect(p.block).toEqual({ height: 1, hash });
      expect(p.timestamp).toEqual(new Date(fake.blockAt(1)!.timestamp * 1000));
    }
  });

  it('handles a block of exactly 25 and of 26 transactions', async () => {
    const a = fake.newAddress();
    for (let i = 0; i < 24; i++) fake.pay(a, 1 + i);
    fake.mine();
    for (let i = 0; i < 25; i++) fake.pay(a, 100 + i);
    fake.mine();
    expect((await client.paymentsInBlock(1, watching(a))).payments).toHaveLength(24);
    expect((await client.paymentsInBlock(2, watching(a))).payments).toHaveLength(25);
    expect(fake.requests.filter((r) => r.includes('/txs/'))).toEqual([
      `/block/${fake.hashAt(1)}/txs/0`,
      `/block/${fake.hashAt(2)}/txs/0`,
      `/block/${fake.hashAt(2)}/txs/25`,
    ]);
  });

  it('reports every watched output of one transaction with its own output index', async () => {
    const [a, b, other] = [fake.newAddress(), fake.newAddress('p2wsh'), fake.newAddress()];
    const txid = fake.send([
      { address: a, sats: 50_000 },
      { address: other, sats: 70_000 },
      { address: b, sats: 30_000 },
      { address: a, sats: 1 },
    ]);
    fake.mine();
    const { payments } = await client.paymentsInBlock(1, watching(a, b));
    expect(payments.map((p) => [p.txHash, p.outputIndex, p.toAddress, p.amount])).toEqual([
      [txid, 0, a, '0.00050000'],
      [txid, 2, b, '0.00030000'],
      [txid, 3, a, '0.00000001'],
    ]);
  });

  it('keeps amounts exact from 1 satoshi to 21 million BTC', async () => {
    const a = fake.newAddress();
    const small = fake.pay(a, 1);
    const big = fake.pay(a, 2_100_000_000_000_000);
    const odd = fake.pay(a, 123_456_789);
    fake.mine();
    const { payments } = await client.paymentsInBlock(1, watching(a));
    const byTx = Object.fromEntries(payments.map((p) => [p.txHash, p.amount]));
    expect(byTx).toEqual({ [small]: '0.00000001', [big]: '21000000.00000000', [odd]: '1.23456789' });
  });

  it('names the sender when every input comes from one address, else null', async () => {
    const a = fake.newAddress();
    const alice = fake.newAddress('p2pkh');
    const bob = fake.newAddress();
    const one = fake.pay(a, 1000, { from: alice });
    const twoInputsSameSender = fake.pay(a, 2000, { from: [bob, bob] });
    const mixed = fake.pay(a, 3000, { from: [alice, bob] });
    fake.mine();
    const { payments } = await client.paymentsInBlock(1, watching(a));
    const senders = Object.fromEntries(payments.map((p) => [p.txHash, p.fromAddress]));
    expect(senders).toEqual({ [one]: alice, [twoInputsSameSender]: bob, [mixed]: null });
  });

  it('reports a coinbase output to a watched address with no sender', async () => {
    const a = fake.newAddress();
    fake.pay(fake.newAddress(), 5000);
    fake.mine(1, [], { coinbaseAddress: a });
    const { payments } = await client.paymentsInBlock(1, watching(a));
    expect(payments).toHaveLength(1);
    const coinbase = fake.transaction(payments[0].txHash)!;
    expect(coinbase.vin[0]).toMatchObject({ is_coinbase: true, prevout: null });
    expect(payments[0]).toMatchObject({ outputIndex: 0, toAddress: a, fromAddress: null, amount: satsToBtc(coinbase.vout[0].value) });
    // 50 BTC subsidy plus the fee of the other transaction.
    expect(coinbase.vout[0].value).toBeGreaterThan(5_000_000_000);
  });

  it('finds nothing in a block without watched outputs', async () => {
    fake.pay(fake.newAddress(), 1000);
    fake.mine();
    expect((await client.paymentsInBlock(1, () => false)).payments).toEqual([]);
  });

  it('fails (to be retried) for a height above the tip', async () => {
    await expect(client.paymentsInBlock(1, () => true)).rejects.toBeInstanceOf(ChainUnavailableError);
  });

  it('fails (to be retried) when the block is replaced during the scan', async () => {
    const a = fake.newAddress();
    for (let i = 0; i < 30; i++) fake.pay(a, 1000 + i);
    const [hash] = fake.mine();
    let reorged = false;
    fake.beforeAnswer = (path) => {
      if (!reorged && path === `/block/${hash}/txs/25`) {
        reorged = true;
        fake.reorg(1, 2);
      }
    };
    await expect(client.paymentsInBlock(1, watching(a))).rejects.toBeInstanceOf(ChainUnavailableError);
    fake.beforeAnswer = null;
    // The retry scans the replacement block (its transactions are back in the mempool).
    const retry = await client.paymentsInBlock(1, watching(a));
    expect(retry.block).toEqual({ height: 1, hash: fake.hashAt(1) });
    expect(retry.payments).toEqual([]);
  });

  it('fails when a block changes between reading its hash and its last page', async () => {
    fake.pay(fake.newAddress(), 1000);
    const [hash] = fake.mine();
    let reorged = false;
    fake.beforeAnswer = (path) => {
      // After the only page: the stale block's transactions still read fine, the re-check catches it.
      if (!reorged && path === '/block-height/1' && fake.requests.includes(`/block/${hash}/txs/0`)) {
        reorged = true;
        fake.reorg(1);
      }
    };
    await expect(client.paymentsInBlock(1, () => true)).rejects.toThrow(/changed during the scan/);
  });
});

describe('EsploraClient.placement', () => {
  it('is null in the mempool, the block once mined', async () => {
    const txid = fake.pay(fake.newAddress(), 1000);
    expect(await client.placement(txid)).toBeNull();
    fake.mine(1);
    fake.mine(2);
    expect(await client.placement(txid)).toEqual({ block: { height: 1, hash: fake.hashAt(1) } });
    expect(await client.placement(txid.toUpperCase())).toEqual({ block: { height: 1, hash: fake.hashAt(1) } });
  });

  it('is null for an unknown or malformed txid', async () => {
    expect(await client.placement('ab'.repeat(32))).toBeNull();
    expect(await client.placement('not-a-txid')).toBeNull();
  });

  it('is null once reorged out, and the new block once mined again', async () => {
    const txid = fake.pay(fake.newAddress(), 1000);
    const [first] = fake.mine(2);
    expect(await client.placement(txid)).toEqual({ block: { height: 1, hash: first } });

    fake.reorg(2);
    expect(fake.mempoolTxids).toContain(txid);
    expect(await client.placement(txid)).toBeNull();

    const [again] = fake.mine();
    expect(again).not.toBe(first);
    expect(await client.placement(txid)).toEqual({ block: { height: 3, hash: again } });
  });

  it('is null for a transaction dropped by a reorg', async () => {
    const txid = fake.pay(fake.newAddress(), 1000);
    fake.mine();
    fake.reorg(1, 2, { drop: true });
    expect(fake.mempoolTxids).not.toContain(txid);
    expect(await client.placement(txid)).toBeNull();
    const status = await fetch(`${fake.url}/tx/${txid}/status`);
    expect([status.status, await status.text()]).toEqual([404, 'Transaction not found']);
  });
});

describe('EsploraClient: node trouble', () => {
  it('throws ChainUnavailableError when the server is down', async () => {
    fake.mine();
    const txid = fake.pay(fake.newAddress(), 1000);
    await fake.close();
    await expect(client.tip()).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(client.blockHash(1)).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(client.paymentsInBlock(1, () => true)).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(client.placement(txid)).rejects.toBeInstanceOf(ChainUnavailableError);
  });

  it('throws ChainUnavailableError on a 500 answer, and works again after it', async () => {
    fake.mine();
    fake.failNext(1);
    await expect(client.tip()).rejects.toBeInstanceOf(ChainUnavailableError);
    fake.failNext(1, { status: 503, path: /\/txs\// });
    await expect(client.paymentsInBlock(1, () => true)).rejects.toThrow(/answered 503/);
    fake.failNext(1, { status: 500 });
    await expect(client.placement('ab'.repeat(32))).rejects.toBeInstanceOf(ChainUnavailableError);
    fake.failNext(1, { status: 500 });
    await expect(client.blockHash(1)).rejects.toBeInstanceOf(ChainUnavailableError);
    expect(await client.tip()).toEqual({ height: 1, hash: fake.hashAt(1) });
  });

  it('throws ChainUnavailableError on unparsable answers', async () => {
    fake.mine();
    fake.failNext(1, { status: 200, body: '<html>maintenance</html>' });
    await expect(client.tip()).rejects.toThrow(/no block hash/);
    fake.failNext(1, { status: 200, body: '{"id":', path: `/block/${fake.hashAt(1)}` });
    await expect(client.tip()).rejects.toThrow(/no JSON/);
    fake.failNext(1, { status: 200, body: '[{"txid":"x"}]', path: /\/txs\// });
    await expect(client.paymentsInBlock(1, () => true)).rejects.toThrow(/no transaction list/);
    fake.failNext(1, { status: 200, body: '[]', path: /\/txs\// });
    await expect(client.paymentsInBlock(1, () => true)).rejects.toThrow(/expected 1/);
    fake.failNext(1, { status: 200, body: '{"confirmed":true}', path: /\/status$/ });
    await expect(client.placement('ab'.repeat(32))).rejects.toBeInstanceOf(ChainUnavailableError);
  });

  it('throws ChainUnavailableError on a timeout', async () => {
    const slow = new EsploraClient(fake.url, { timeoutMs: 100 });
    fake.delayMs = 1_000;
    await expect(slow.tip()).rejects.toBeInstanceOf(ChainUnavailableError);
    fake.delayMs = 0;
  });

  it('uses an injected fetch', async () => {
    const calls: string[] = [];
    const viaFetch = new EsploraClient(`${fake.url}/`, {
      fetch: (input, init) => {
        calls.push(String(input));
        return fetch(input, init);
      },
    });
    expect(await viaFetch.blockHash(0)).toBe(fake.hashAt(0));
    expect(calls).toEqual([`${fake.url}/block-height/0`]);
  });
});

describe('FakeEsplora: Esplora response format', () => {
  it('answers blocks, pages and statuses in the shape of Esplora', async () => {
    const a = fake.newAddress();
    const txid = fake.pay(a, 150_000_000, { from: fake.newAddress('p2pkh') });
    const [hash] = fake.mine(2);
    const get = async (path: string) => {
      const res = await fetch(`${fake.url}${path}`);
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    };

    expect(await get('/blocks/tip/height')).toMatchObject({ status: 200, type: 'text/plain', body: '2' });
    expect(await get('/block-height/3')).toMatchObject({ status: 404, body: 'Block not found' });
    const header = JSON.parse((await get(`/block/${hash}`)).body);
    expect(Object.keys(header)).toEqual([
      'id', 'height', 'version', 'timestamp', 'tx_count', 'size', 'weight', 'merkle_root', 'previousblockhash', 'mediantime', 'nonce', 'bits', 'difficulty',
    ]);
    expect(header).toMatchObject({ id: hash, height: 1, tx_count: 2, previousblockhash: fake.hashAt(0), timestamp: fake.blockAt(0)!.timestamp + 600 });

    expect(await get(`/block/${hash}/txs/1`)).toMatchObject({ status: 400, body: 'start index must be a multiple of 25' });
    const [coinbase, payment] = JSON.parse((await get(`/block/${hash}/txs/0`)).body);
    expect(Object.keys(payment)).toEqual(['txid', 'version', 'locktime', 'vin', 'vout', 'size', 'weight', 'fee', 'status']);
    expect(payment.status).toEqual({ confirmed: true, block_height: 1, block_hash: hash, block_time: header.timestamp });
    expect(payment.txid).toBe(txid);
    expect(payment.vout[0]).toEqual({
      scriptpubkey: expect.stringMatching(/^0014[0-9a-f]{40}$/),
      scriptpubkey_asm: expect.stringMatching(/^OP_0 OP_PUSHBYTES_20 [0-9a-f]{40}$/),
      scriptpubkey_type: 'v0_p2wpkh',
      scriptpubkey_address: a,
      value: 150_000_000,
    });
    expect(payment.vin[0]).toMatchObject({ is_coinbase: false, sequence: expect.any(Number), scriptsig: expect.any(String), prevout: { scriptpubkey_type: 'p2pkh' } });
    expect(payment.fee).toBe(payment.vin[0].prevout.value - payment.vout[0].value - payment.vout[1].value);
    expect(coinbase.vin[0]).toMatchObject({ txid: '0'.repeat(64), vout: 4294967295, prevout: null, is_coinbase: true });
    expect(coinbase.vout[1]).toMatchObject({ scriptpubkey_type: 'op_return', value: 0 });
    expect(coinbase.vout[1].scriptpubkey_address).toBeUndefined();

    expect(JSON.parse((await get(`/tx/${txid}/status`)).body)).toEqual(payment.status);
    const pending = fake.pay(a, 1);
    expect(JSON.parse((await get(`/tx/${pending}/status`)).body)).toEqual({ confirmed: false });
    expect(await get('/nope')).toMatchObject({ status: 404, body: 'endpoint does not exist "/nope"' });
  });
});
