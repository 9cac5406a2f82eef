/**
 * BTC detection against Esplora's own response format rather than the project's fake
 * (issue 24, item 5): test/chains/fixtures/esplora/chain.json holds a tip, its blocks, their
 * transaction pages (one block spans two pages of 25) and transactions with their status,
 * shaped as Esplora documents and serializes them (the file's `_source` says where from). A
 * plain HTTP server answers each request path with its recorded body; the client and then the
 * watcher's scan run against it.
 */
import { createServer, Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { testDependencies } from '../support/dependencies';
import { customerWithWallet } from '../crypto/helpers';
import { EsploraClient } from '../../src/chains/esplora';
import { scanChain } from '../../src/services/crypto/chainWatcher';
import { ChainPaymentRecord } from '../../src/models/chainPayment';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';

interface Fixture {
  meta: { watched: { A: string; B: string }; payer: string; payments: { a1: string; b: string; a2: string } };
  routes: Record<string, unknown>;
}
const fixture: Fixture = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'esplora', 'chain.json'), 'utf8'));
const { meta, routes } = fixture;
const tipHash = routes['/blocks/tip/hash'] as string;
const hashAt = (h: number) => routes[`/block-height/${h}`] as string;
const blockTime = (h: number) => new Date((routes[`/block/${hashAt(h)}`] as { timestamp: number }).timestamp * 1000);

useTestDatabase();
let server: Server;
let url: string;
let api: TestApi;
const requested: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    requested.push(path);
    const body = routes[path];
    if (body === undefined) {
      // Esplora answers an unknown block or transaction with a 404 and a plain text reason.
      res.writeHead(404, { 'content-type': 'text/plain' }).end(path.startsWith('/tx/') ? 'Transaction not found' : 'Block not found');
    } else if (typeof body === 'string') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
  await new Promise((r) => server.close(r));
});

describe('the fixture chain is consistent', () => {
  it('links each block to its parent, pages it by 25, and places every transaction in its block', () => {
    const tip = Number(routes['/blocks/tip/height']);
    expect(hashAt(tip)).toBe(tipHash);
    for (let h = tip - 1; h <= tip; h++) {
      const block = routes[`/block/${hashAt(h)}`] as { id: string; height: number; timestamp: number; tx_count: number; previousblockhash: string };
      expect([block.id, block.height, block.previousblockhash]).toEqual([hashAt(h), h, hashAt(h - 1)]);
      const pages = Object.keys(routes).filter((p) => p.startsWith(`/block/${block.id}/txs/`));
      expect(pages).toHaveLength(Math.ceil(block.tx_count / 25));
      const txs = pages.flatMap((p) => routes[p] as { txid: string; fee: number; vin: { is_coinbase: boolean; prevout: { value: number } | null }[]; vout: { value: number }[]; status: object }[]);
      expect(txs).toHaveLength(block.tx_count);
      for (const tx of txs) {
        expect(tx.status).toEqual({ confirmed: true, block_height: h, block_hash: block.id, block_time: block.timestamp });
        if (!tx.vin[0].is_coinbase) expect(tx.vin.reduce((s, i) => s + i.prevout!.value, 0) - tx.vout.reduce((s, o) => s + o.value, 0)).toBe(tx.fee);
        if (routes[`/tx/${tx.txid}`]) expect(routes[`/tx/${tx.txid}`]).toEqual(tx);
      }
      // The coinbase claims the 3.125 BTC subsidy and the block's fees.
      expect(txs[0].vout.reduce((s, o) => s + o.value, 0)).toBe(312_500_000 + txs.reduce((s, t) => s + t.fee, 0));
    }
  });
});

describe('EsploraClient against Esplora responses', () => {
  const client = () => new EsploraClient(url, { timeoutMs: 2_000 });

  it('reads the tip, block hashes, payments over two pages, and placements', async () => {
    const tip = Number(routes['/blocks/tip/height']);
    expect(await client().tip()).toEqual({ height: tip, hash: tipHash });
    expect(await client().blockHash(tip + 1)).toBeNull();
    const watched = new Set([meta.watched.A, meta.watched.B]);
    const found = await client().paymentsInBlock(tip - 1, (a) => watched.has(a));
    const block = { height: tip - 1, hash: hashAt(tip - 1) };
    expect(found.block).toEqual(block);
    expect(found.parentHash).toBe(hashAt(tip - 2));
    expect(found.payments).toEqual([
      { txHash: meta.payments.a1, outputIndex: 0, toAddress: meta.watched.A, amount: '0.01500000', fromAddress: meta.payer, block, timestamp: blockTime(tip - 1) },
      // Two outputs to B (around an OP_RETURN), from two senders: no single sender.
      { txHash: meta.payments.b, outputIndex: 0, toAddress: meta.watched.B, amount: '0.00100000', fromAddress: null, block, timestamp: blockTime(tip - 1) },
      { txHash: meta.payments.b, outputIndex: 2, toAddress: meta.watched.B, amount: '0.00200000', fromAddress: null, block, timestamp: blockTime(tip - 1) },
    ]);
    expect(requested).toEqual(expect.arrayContaining([`/block/${block.hash}/txs/0`, `/block/${block.hash}/txs/25`]));
    expect(await client().placement(meta.payments.a2)).toEqual({ block: { height: tip, hash: tipHash } });
    expect(await client().placement('ab'.repeat(32))).toBeNull();
  });
});

describe('the watcher scan against Esplora responses', () => {
  it('records the final payments to watched addresses once and leaves the fresh one pending', async () => {
    const a = await newAccount(api.url);
    const { customer, wallet, accountWallet } = await customerWithWallet(a.api);
    for (const [walletId, address] of [[wallet.id, meta.watched.A], [accountWallet.id, meta.watched.B]]) {
      expect((await a.api.post('/v1/crypto_addresses', { wallet_id: walletId, currency_code: 'BTC', address })).status).toBe(201);
    }
    const deps = testDependencies();
    const settings = { confirmations: 2, pollSeconds: 1 };
    const tip = Number(routes['/blocks/tip/height']);

    const first = await scanChain(deps, new EsploraClient(url), settings, null);
    // Three chain payments (outputs) recorded, as two crypto transactions.
    expect(first).toMatchObject({ cursor: { height: tip, hash: tipHash }, caughtUp: true, tipHeight: tip, recorded: 3 });
    const txs = await CryptoTransaction.find({}).sort({ transaction_id: 1 }).lean();
    const want = [
      { transaction_id: meta.payments.a1, amount: '0.01500000', customer_id: customer.id, from_address: meta.payer },
      // Both outputs to B as one transaction, with their sum; to the account wallet: no customer.
      { transaction_id: meta.payments.b, amount: '0.00300000', customer_id: null, from_address: null },
    ].sort((x, y) => (x.transaction_id < y.transaction_id ? -1 : 1));
    expect(txs).toHaveLength(2);
    txs.forEach((t, i) => expect(t).toMatchObject({ ...want[i], currency: 'BTC', transaction_source: 'blockchain', timestamp: blockTime(tip - 1) }));
    // One confirmation of two: seen, not recorded.
    expect(await ChainPaymentRecord.findById(`BTC:${meta.payments.a2}:0`).lean()).toMatchObject({ status: 'pending', amount: '0.00050000', block_height: tip });

    // The same chain again: nothing new.
    expect(await scanChain(deps, new EsploraClient(url), settings, first.cursor)).toMatchObject({ recorded: 0, cursor: first.cursor });
    expect(await CryptoTransaction.countDocuments({})).toBe(2);
  });
});
