/**
 * On-chain detection of BTC end to end: a fake Esplora (an in-memory chain served in Esplora's
 * real HTTP format), the real API and worker on Temporal's test server, the watcher workflow
 * polling it.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { useTestDatabase } from '../support/db';
import { timeSkippingEnvironment } from '../support/temporal';
import { newAccount, startTestApi, TestApi, Client } from '../support/api';
import { testDependencies } from '../support/dependencies';
import { createTestWorker, fixtureHistory, recordHistory, replay } from '../support/workflows';
import { FakeEsplora } from '../support/esplora';
import { waitFor } from '../support/wait';
import { customerWithWallet, invoiceOf } from '../crypto/helpers';
import { loadConfig } from '../../src/config';
import { ensureChainWatchers } from '../../src/services/crypto/chainWatcher';
import { DEFAULT_SANDBOX } from '../../src/services/accounts/accounts';
import { workflowIds } from '../../src/temporal/workflowIds';
import { chainCursorQuery } from '../../src/temporal/cryptoDefinitions';
import { Event } from '../../src/models/event';
import { ChainPaymentRecord } from '../../src/models/chainPayment';
import { CryptoTransaction, CryptoTransactionDoc } from '../../src/models/cryptoTransaction';

useTestDatabase();
const taskQueue = 'btc-watcher-test';
const CONFIRMATIONS = 2;
let env: TestWorkflowEnvironment;
let api: TestApi;
let fake: FakeEsplora;
let chainEnv: Record<string, string>;

beforeAll(async () => {
  // Production scopes accept mainnet addresses only: the fake chain uses mainnet forms.
  fake = await FakeEsplora.start({ network: 'mainnet' });
  fake.mine(5);
  chainEnv = { BTC_ESPLORA_URL: fake.url, BTC_CONFIRMATIONS: String(CONFIRMATIONS), BTC_POLL_SECONDS: '1' };
  env = await timeSkippingEnvironment();
  api = await startTestApi({}, chainEnv, { client: env.client, taskQueue });
});
afterAll(async () => {
  await api?.close();
  await env?.teardown();
  await fake?.close();
});
afterEach(async () => {
  await watcher().terminate('test over').catch(() => undefined);
});

const watcher = () => env.client.workflow.getHandle(workflowIds.chainWatcher('BTC'));
const startWatcher = async () => expect(await ensureChainWatchers(testDependencies({ env: chainEnv, temporal: { client: env.client, taskQueue } }))).toEqual(['BTC']);

/** A customer of a new account (or of `account`'s `scope`), with `address` on its wallet. */
async function payer(address = fake.newAddress(), account?: Awaited<ReturnType<typeof newAccount>>, scope: 'api' | 'sandbox' = 'api') {
  const a = account ?? (await newAccount(api.url));
  const c: Client = a[scope];
  const { customer, wallet } = await customerWithWallet(c);
  const res = await c.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address });
  expect(res.status).toBe(201);
  return { a, c, customer, address: res.body };
}

/** The watcher has scanned up to the fake chain's current tip (that very block: a reorg at the same height counts). */
async function scannedToTip(timeoutMs?: number) {
  const tip = { height: fake.height, hash: fake.tipHash };
  await waitFor(
    async () => {
      const cursor = await watcher().query(chainCursorQuery).catch(() => null);
      return cursor?.height === tip.height && cursor.hash === tip.hash;
    },
    `scan of block ${tip.height} ${tip.hash}`,
    timeoutMs,
  );
}

/**
 * The positive signal before asserting that nothing more was recorded: one more block, and the
 * watcher's scan of it done (a scan settles every pending payment before the cursor moves).
 */
async function laterScanDone() {
  fake.mine(1);
  await scannedToTip();
}

const chainPayment = (txid: string, vout = 0) => ChainPaymentRecord.findById(`BTC:${txid}:${vout}`).lean();

/** The crypto transaction `txid` recorded in `c`'s scope, once its allocation wrote its event (the allocation's last write). */
async function allocated(c: Client, txid: string, timeoutMs?: number): Promise<any> {
  const tx = await waitFor(
    async () => ((await c.get('/v1/crypto_transactions')).body.crypto_transactions as any[]).find((t) => t.transaction_id === txid),
    `crypto transaction ${txid}`,
    timeoutMs,
  );
  await waitFor(async () => (await Event.countDocuments({ event: 'crypto_transaction.allocated', 'payload.id': tx.id })) > 0, `allocated event of ${tx.id}`, timeoutMs);
  return (await c.get(`/v1/crypto_transactions/${tx.id}`)).body;
}

describe('BTC watcher', () => {
  it('records a payment once it has the confirmations, then pays the invoice and writes the events; the history replays', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { c, customer, address } = await payer();
      const invoice = await invoiceOf(c, customer.id, '100.00', '2027-01-01');
      await startWatcher();
      await scannedToTip();

      // 0.002 BTC at the fixed $50,000 = $100.00, from one sender, in one block: one confirmation.
      const sender = fake.newAddress('p2pkh');
      const txid = fake.pay(address.address, 200_000, { from: sender });
      fake.mine(1);
      const height = fake.height;
      await scannedToTip();
      expect(await chainPayment(txid)).toMatchObject({
        status: 'pending', block_height: height, block_hash: fake.hashAt(height), amount: '0.00200000', from_address: sender, to_address: address.address,
      });
      expect(await CryptoTransaction.countDocuments({ transaction_id: txid })).toBe(0);
      expect((await c.get('/v1/crypto_transactions')).body.crypto_transactions).toEqual([]);
      expect((await c.get(`/v1/invoices/${invoice.id}`)).body.status).not.toBe('paid');

      // The block that reaches the threshold.
      fake.mine(1);
      const tx = await allocated(c, txid);
      expect(tx).toMatchObject({
        transaction_source: 'blockchain',
        transaction_id: txid,
        amount: '0.00200000',
        currency: 'BTC',
        to_address_id: address.id,
        from_address: sender,
        allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })],
      });
      expect((await c.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
      expect(await chainPayment(txid)).toMatchObject({ status: 'recorded' });
      for (const name of ['crypto_transaction.received', 'crypto_transaction.allocated']) {
        expect(await Event.countDocuments({ event: name, 'payload.id': tx.id })).toBe(1);
      }
      expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);

      // More blocks and scans record nothing twice.
      fake.mine(3);
      await scannedToTip();
      await laterScanDone();
      expect(await CryptoTransaction.countDocuments({ transaction_id: txid })).toBe(1);
      expect(await Event.countDocuments({ event: 'crypto_transaction.received', 'payload.id': tx.id })).toBe(1);
      expect(await Event.countDocuments({ event: 'crypto_transaction.allocated', 'payload.id': tx.id })).toBe(1);
      expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);

      // The watcher's history (closed: terminated) replays against today's workflow code.
      const handle = watcher();
      await handle.terminate('history for the replay test');
      await replay(recordHistory('chain-watcher-btc-current', await handle.fetchHistory()), 'replay-chain-watcher-btc');
      // And so does the one kept (read-only) from earlier code.
      await replay(fixtureHistory('chain-watcher-btc'), 'replay-chain-watcher-btc-kept');
    });
  });

  it('one transaction paying two customers records one payment for each, each paying its own invoice', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const first = await payer(fake.newAddress('p2wsh'));
      const second = await payer(fake.newAddress('p2sh'));
      const invoice1 = await invoiceOf(first.c, first.customer.id, '100.00', '2027-01-01');
      const invoice2 = await invoiceOf(second.c, second.customer.id, '150.00', '2027-01-01');
      await startWatcher();
      await scannedToTip();

      // Inputs from two addresses: no single sender.
      const txid = fake.send(
        [{ address: first.address.address, sats: 200_000 }, { address: fake.newAddress(), sats: 5_000 }, { address: second.address.address, sats: 300_000 }],
        { from: [fake.newAddress(), fake.newAddress('p2tr')] },
      );
      fake.mine(CONFIRMATIONS);
      const [tx1, tx2] = await Promise.all([allocated(first.c, txid), allocated(second.c, txid)]);
      expect(tx1).toMatchObject({ transaction_id: txid, amount: '0.00200000', to_address_id: first.address.id, from_address: null, transaction_source: 'blockchain' });
      expect(tx2).toMatchObject({ transaction_id: txid, amount: '0.00300000', to_address_id: second.address.id, from_address: null, transaction_source: 'blockchain' });
      expect(tx1.allocations).toEqual([expect.objectContaining({ invoice_id: invoice1.id, amount_applied: '100.00' })]);
      expect(tx2.allocations).toEqual([expect.objectContaining({ invoice_id: invoice2.id, amount_applied: '150.00' })]);
      expect((await first.c.get(`/v1/invoices/${invoice1.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
      expect((await second.c.get(`/v1/invoices/${invoice2.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '150.00' });
      expect(await chainPayment(txid, 0)).toMatchObject({ status: 'recorded', to_address: first.address.address });
      expect(await chainPayment(txid, 1)).toBeNull(); // not a watched address
      expect(await chainPayment(txid, 2)).toMatchObject({ status: 'recorded', to_address: second.address.address });
      expect(await CryptoTransaction.countDocuments({ transaction_id: txid })).toBe(2);
    });
  });

  it('never records a payment reorged out before the threshold; records once a payment that was mined again', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { c, customer, address } = await payer();
      const invoice = await invoiceOf(c, customer.id, '100.00', '2027-01-01');
      await startWatcher();
      await scannedToTip();

      // Mined, then its block is replaced and the transaction forgotten (double-spent).
      const gone = fake.pay(address.address, 300_000);
      fake.mine(1);
      await scannedToTip();
      expect(await chainPayment(gone)).toMatchObject({ status: 'pending' });
      fake.reorg(1, { drop: true });
      fake.mine(2);
      await scannedToTip();
      await waitFor(async () => (await chainPayment(gone))?.status === 'dropped', 'payment dropped');
      fake.mine(2);
      await scannedToTip();
      await laterScanDone();
      expect(await chainPayment(gone)).toMatchObject({ status: 'dropped' });
      expect(await CryptoTransaction.countDocuments({ transaction_id: gone })).toBe(0);
      expect((await c.get('/v1/crypto_transactions')).body.crypto_transactions).toEqual([]);

      // Mined, reorged back into the mempool, then mined again in a later block.
      const back = fake.pay(address.address, 200_000);
      fake.mine(1);
      const firstHeight = fake.height;
      await scannedToTip();
      expect(await chainPayment(back)).toMatchObject({ status: 'pending', block_height: firstHeight });
      fake.reorg(1);
      expect(fake.mempoolTxids).toContain(back);
      await scannedToTip();
      await waitFor(async () => (await chainPayment(back))?.status === 'dropped', 'payment back in the mempool');
      expect(await CryptoTransaction.countDocuments({ transaction_id: back })).toBe(0);
      fake.mine(1);
      await scannedToTip();
      expect(await chainPayment(back)).toMatchObject({ status: 'pending', block_height: firstHeight + 1, block_hash: fake.hashAt(firstHeight + 1) });
      expect(await CryptoTransaction.countDocuments({ transaction_id: back })).toBe(0);
      fake.mine(1);
      const tx = await allocated(c, back);
      expect(tx).toMatchObject({ amount: '0.00200000', allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })] });
      expect((await c.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });

      fake.mine(2);
      await scannedToTip();
      await laterScanDone();
      expect(await CryptoTransaction.countDocuments({ transaction_id: back })).toBe(1);
      expect(await CryptoTransaction.countDocuments({ transaction_id: gone })).toBe(0);
      expect(await Event.countDocuments({ event: 'crypto_transaction.received', 'payload.id': tx.id })).toBe(1);
      expect(await chainPayment(back)).toMatchObject({ status: 'recorded' });
      expect(await chainPayment(gone)).toMatchObject({ status: 'dropped' });
    });
  });

  it('a node answering 500 delays detection but does not break it (the scan is retried)', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { c, customer, address } = await payer(fake.newAddress('p2tr'));
      const invoice = await invoiceOf(c, customer.id, '100.00', '2027-01-01');
      await startWatcher();
      await scannedToTip();

      // Two whole scans fail (any request), then one fails while reading the block's transactions.
      fake.failNext(2);
      fake.failNext(1, { path: /^\/block\/[0-9a-f]{64}\/txs\/0$/ });
      const txid = fake.pay(address.address, 200_000);
      fake.mine(CONFIRMATIONS);
      const tx = await allocated(c, txid, 60_000);
      expect(tx).toMatchObject({ amount: '0.00200000', transaction_source: 'blockchain', allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })] });
      expect((await c.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
      expect(await CryptoTransaction.countDocuments({ transaction_id: txid })).toBe(1);

      // The scan activity failed on the 500s and was retried, within the same workflow run (the
      // test server keeps the attempt number, not the last failure).
      const history = await watcher().fetchHistory();
      const attempts = (history.events ?? []).map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0);
      expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
      expect((history.events ?? []).some((e) => e.workflowExecutionFailedEventAttributes || e.workflowExecutionContinuedAsNewEventAttributes)).toBe(false);
      expect((await watcher().describe()).status.name).toBe('RUNNING');
    });
  });

  it('an address held by two accounts (and a sandbox) records the payment in each, as its own transaction', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const shared = fake.newAddress();
      const one = await payer(shared);
      // Upper-case bech32 is the same address (the node reports it in lower case).
      const two = await payer(shared.toUpperCase());
      const sandbox = await payer(shared, one.a, 'sandbox');
      const invoices = await Promise.all([one, two, sandbox].map((p) => invoiceOf(p.c, p.customer.id, '100.00', '2027-01-01')));
      await startWatcher();
      await scannedToTip();

      const sender = fake.newAddress('p2wsh');
      const txid = fake.pay(shared, 200_000, { from: sender });
      fake.mine(CONFIRMATIONS);
      const txs = await Promise.all([one, two, sandbox].map((p) => allocated(p.c, txid)));
      expect(new Set(txs.map((t) => t.id)).size).toBe(3);
      txs.forEach((tx, i) => {
        const p = [one, two, sandbox][i];
        expect(tx).toMatchObject({
          transaction_id: txid, amount: '0.00200000', to_address_id: p.address.id, to_address: p.address.address, from_address: sender, transaction_source: 'blockchain',
          allocations: [expect.objectContaining({ invoice_id: invoices[i].id, amount_applied: '100.00' })],
        });
      });
      for (const [i, p] of [one, two, sandbox].entries()) {
        expect((await p.c.get(`/v1/invoices/${invoices[i].id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
        expect((await p.c.get('/v1/crypto_transactions')).body.crypto_transactions).toHaveLength(1);
      }
      const docs = await CryptoTransaction.find({ transaction_id: txid }).lean<CryptoTransactionDoc[]>();
      expect(docs.map((d) => `${d.account_id}/${d.sandbox ?? ''}`).sort()).toEqual(
        [`${one.a.account_id}/`, `${two.a.account_id}/`, `${one.a.account_id}/${DEFAULT_SANDBOX}`].sort(),
      );

      fake.mine(2);
      await scannedToTip();
      await laterScanDone();
      expect(await CryptoTransaction.countDocuments({ transaction_id: txid })).toBe(3);
    });
  });

  // Crypto transactions are unique per (scope, currency, hash, receiving address): two outputs of
  // one transaction to the same address are recorded as one transaction with their sum.
  it('a transaction with two outputs to the same address credits both outputs', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { c, customer, address } = await payer();
      const invoice = await invoiceOf(c, customer.id, '100.00', '2027-01-01');
      await startWatcher();
      await scannedToTip();

      // 0.001 + 0.001 BTC = $100.00 (e.g. two batched withdrawals of an exchange to one address).
      const txid = fake.send([{ address: address.address, sats: 100_000 }, { address: address.address, sats: 100_000 }]);
      fake.mine(CONFIRMATIONS);
      await allocated(c, txid);
      await waitFor(async () => (await ChainPaymentRecord.countDocuments({ tx_hash: txid, status: 'recorded' })) === 2, 'both outputs recorded');
      await scannedToTip();
      await laterScanDone();
      const docs = await CryptoTransaction.find({ transaction_id: txid }).lean<CryptoTransactionDoc[]>();
      const sats = docs.reduce((sum, d) => sum + Math.round(Number(d.amount) * 1e8), 0);
      expect(sats).toBe(200_000);
      expect((await c.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    });
  });

  // A reorg while a scan reads several blocks must not mix two forks (the new block H+1 skipped).
  it('a reorg in the middle of a multi-block scan does not skip the new blocks', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { c, customer, address } = await payer();
      const invoice = await invoiceOf(c, customer.id, '100.00', '2027-01-01');
      await startWatcher();
      await scannedToTip();

      // Two blocks at once: one scan reads H+1, then H+2. Just before it asks for H+2, both are
      // replaced by a fork whose H+1 holds a payment (the old fork never had it).
      const h = fake.height;
      const payment = fake.tx([{ address: address.address, sats: 200_000 }]);
      let reorged = false;
      fake.beforeAnswer = (path) => {
        if (reorged || path !== `/block-height/${h + 2}`) return;
        reorged = true;
        fake.reorg(2, [[payment], []]);
      };
      fake.mine(2);
      try {
        await waitFor(() => reorged, 'the reorg during the scan');
      } finally {
        fake.beforeAnswer = null;
      }
      expect(fake.transaction(payment.txid)?.status).toMatchObject({ confirmed: true, block_height: h + 1 });
      fake.mine(1);
      await scannedToTip();
      const tx = await allocated(c, payment.txid, 15_000);
      expect(tx).toMatchObject({ amount: '0.00200000', allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })] });
      expect(await CryptoTransaction.countDocuments({ transaction_id: payment.txid })).toBe(1);
    });
  });

  // A node that once answers "not in a block" for a transaction whose block is still in the chain
  // (a lagging backend) must not make the watcher drop the payment.
  it('a node briefly answering "unconfirmed" for a mined transaction does not lose the payment', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { c, customer, address } = await payer();
      const invoice = await invoiceOf(c, customer.id, '100.00', '2027-01-01');
      await startWatcher();
      await scannedToTip();

      const txid = fake.pay(address.address, 200_000);
      // One stale answer, as from a backend that has not seen the block yet.
      fake.failNext(1, { status: 200, body: JSON.stringify({ confirmed: false }), path: `/tx/${txid}/status` });
      fake.mine(1);
      const height = fake.height;
      await scannedToTip();
      fake.mine(CONFIRMATIONS);
      await scannedToTip();
      // The block never left the best chain.
      expect(fake.transaction(txid)?.status).toMatchObject({ confirmed: true, block_height: height });
      const tx = await allocated(c, txid, 15_000);
      expect(tx).toMatchObject({ amount: '0.00200000', allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })] });
      expect(await chainPayment(txid)).toMatchObject({ status: 'recorded', block_height: height });
    });
  });
});
