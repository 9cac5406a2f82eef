/**
 * On-chain detection of ETH end to end: a local development chain, the real API and worker on
 * Temporal's test server, the watcher workflow polling over JSON-RPC.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { useTestDatabase } from '../support/db';
import { timeSkippingEnvironment } from '../support/temporal';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { testDependencies } from '../support/dependencies';
import { createTestWorker } from '../support/workflows';
import { startDevChain, DevChain, newEthAddress } from '../support/devChain';
import { waitFor } from '../support/wait';
import { customerWithWallet, invoiceOf } from '../crypto/helpers';
import { loadConfig } from '../../src/config';
import { ensureChainWatchers } from '../../src/services/crypto/chainWatcher';
import { workflowIds } from '../../src/temporal/workflowIds';
import { chainCursorQuery } from '../../src/temporal/cryptoDefinitions';
import { Event } from '../../src/models/event';
import { ChainPaymentRecord } from '../../src/models/chainPayment';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';

useTestDatabase();
const taskQueue = 'eth-watcher-test';
const CONFIRMATIONS = 3;
let env: TestWorkflowEnvironment;
let api: TestApi;
let chain: DevChain;
let chainEnv: Record<string, string>;

beforeAll(async () => {
  chain = await startDevChain();
  chainEnv = { ETH_RPC_URL: chain.url, ETH_CONFIRMATIONS: String(CONFIRMATIONS), ETH_POLL_SECONDS: '1' };
  env = await timeSkippingEnvironment();
  api = await startTestApi({}, chainEnv, { client: env.client, taskQueue });
});
afterAll(async () => {
  await api?.close();
  await env?.teardown();
  await chain?.close();
});
afterEach(async () => {
  await env.client.workflow.getHandle(workflowIds.chainWatcher('ETH')).terminate('test over').catch(() => undefined);
});

async function payer() {
  const a = await newAccount(api.url);
  const { customer, wallet } = await customerWithWallet(a.api);
  const address = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address: newEthAddress() })).body;
  expect(address.id).toBeDefined();
  return { a, customer, address };
}

/** The watcher has scanned up to the chain's current tip. */
async function scannedToTip() {
  const tip = await chain.height();
  await waitFor(async () => ((await env.client.workflow.getHandle(workflowIds.chainWatcher('ETH')).query(chainCursorQuery))?.height ?? -1) >= tip, `scan of block ${tip}`);
}

describe('ETH watcher', () => {
  it('records a payment once it has the confirmations, then pays the invoice and writes the events', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { a, customer, address } = await payer();
      const invoice = await invoiceOf(a.api, customer.id, '1500.00', '2027-01-01');
      expect(await ensureChainWatchers(testDependencies({ env: chainEnv, temporal: { client: env.client, taskQueue } }))).toEqual(['ETH']);

      // 0.5 ETH at the fixed $3,000 = $1,500, in its own block: one confirmation.
      const sent = await chain.send(address.address, '0.5');
      await scannedToTip();
      expect(await ChainPaymentRecord.findById(`ETH:${sent.hash.toLowerCase()}:0`).lean()).toMatchObject({ status: 'pending', block_height: sent.blockNumber, amount: '0.5' });
      await chain.mine(CONFIRMATIONS - 2);
      await scannedToTip();
      expect((await a.api.get('/v1/crypto_transactions')).body.crypto_transactions).toEqual([]);

      // The block that reaches the threshold.
      await chain.mine(1);
      // The allocation's last write is its event.
      await waitFor(async () => (await Event.countDocuments({ event: 'crypto_transaction.allocated' })) > 0, 'allocated event');
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '1500.00' });
      const list = (await a.api.get('/v1/crypto_transactions')).body.crypto_transactions;
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({
        transaction_source: 'blockchain',
        transaction_id: sent.hash.toLowerCase(),
        amount: '0.5',
        currency: 'ETH',
        to_address_id: address.id,
        from_address: sent.from,
        allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '1500.00' })],
      });
      for (const name of ['crypto_transaction.received', 'crypto_transaction.allocated']) {
        expect(await Event.countDocuments({ event: name, 'payload.id': list[0].id })).toBe(1);
      }
      expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);

      // More blocks and scans record nothing twice.
      await chain.mine(3);
      await scannedToTip();
      // The positive signal first: one more block, and the watcher's scan of it done.
      await chain.mine(1);
      await scannedToTip();
      expect(await CryptoTransaction.countDocuments({ transaction_id: sent.hash.toLowerCase() })).toBe(1);
      expect(await Event.countDocuments({ event: 'crypto_transaction.received', 'payload.id': list[0].id })).toBe(1);
    });
  });

  it('a payment the watcher recorded is not recorded again by hand or by a claim, however its hash is spelled', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { a, customer, address } = await payer();
      const invoice = await invoiceOf(a.api, customer.id, '1500.00', '2027-01-01');
      const next = await invoiceOf(a.api, customer.id, '1500.00', '2027-02-01');
      await ensureChainWatchers(testDependencies({ env: chainEnv, temporal: { client: env.client, taskQueue } }));
      const sent = await chain.send(address.address, '0.5');
      await chain.mine(CONFIRMATIONS - 1);
      await waitFor(async () => (await a.api.get(`/v1/invoices/${invoice.id}`)).body.status === 'paid', 'invoice paid by the watcher');
      const [onChain] = (await a.api.get('/v1/crypto_transactions')).body.crypto_transactions;
      expect(onChain).toMatchObject({ transaction_source: 'blockchain', transaction_id: sent.hash.toLowerCase() });

      for (const spelling of [sent.hash.slice(2), sent.hash.slice(2).toUpperCase(), `0X${sent.hash.slice(2)}`]) {
        const manual = await a.api.post('/v1/crypto_transactions', { to_address_id: address.id, amount: '0.5', currency_code: 'ETH', transaction_id: spelling });
        expect(manual.status).toBe(422);
        expect(manual.body.error).toMatchObject({ code: 'parameter_invalid', param: 'transaction_id' });
        expect(manual.body.error.message).toContain(onChain.id);
      }
      expect(await CryptoTransaction.countDocuments({ to_address_id: address.id })).toBe(1);
      expect((await a.api.get(`/v1/invoices/${next.id}`)).body).toMatchObject({ status: 'pending', amount_paid: '0.00' });
    });
  });

  it('a manual entry the chain contradicts stays as recorded, is flagged with both amounts, and the merchant is told once', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { a, customer, address } = await payer();
      const invoice = await invoiceOf(a.api, customer.id, '300.00', '2027-01-01');
      await ensureChainWatchers(testDependencies({ env: chainEnv, temporal: { client: env.client, taskQueue } }));
      // Mined, not yet final: the merchant records it by hand first, misspelled and with another amount.
      const sent = await chain.send(address.address, '0.2');
      const manual = await a.api.post('/v1/crypto_transactions', { to_address_id: address.id, amount: '0.1', currency_code: 'ETH', transaction_id: sent.hash.slice(2).toUpperCase() });
      expect(manual.status).toBe(201);
      expect(manual.body.transaction_id).toBe(sent.hash.toLowerCase());
      // The allocation's last write is its event.
      await waitFor(async () => (await Event.countDocuments({ event: 'crypto_transaction.allocated', 'payload.id': manual.body.id })) > 0, 'manual entry allocated');
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
      const allocated = (await a.api.get(`/v1/crypto_transactions/${manual.body.id}`)).body;

      await chain.mine(CONFIRMATIONS);
      await waitFor(async () => (await ChainPaymentRecord.findById(`ETH:${sent.hash.toLowerCase()}:0`).lean())?.status === 'recorded', 'chain payment recorded');
      const flagged = (await a.api.get(`/v1/crypto_transactions/${manual.body.id}`)).body;
      expect(flagged).toMatchObject({ amount: '0.1', transaction_source: 'manual_entry', allocations: allocated.allocations, unallocated_amount: allocated.unallocated_amount });
      expect(flagged.amount_mismatch).toEqual({ recorded_amount: '0.1', chain_amount: '0.2', detected_at: expect.any(String) });
      expect((await a.api.get('/v1/crypto_transactions')).body.crypto_transactions).toEqual([flagged]);
      const told = await Event.find({ event: 'crypto_transaction.amount_mismatch', 'payload.id': manual.body.id }).lean();
      expect(told).toHaveLength(1);
      expect((told[0] as any).payload.amount_mismatch).toMatchObject({ recorded_amount: '0.1', chain_amount: '0.2' });

      // Later scans neither record it again nor tell the merchant twice.
      await chain.mine(2);
      await scannedToTip();
      expect(await CryptoTransaction.countDocuments({ to_address_id: address.id })).toBe(1);
      expect(await Event.countDocuments({ event: 'crypto_transaction.amount_mismatch', 'payload.id': manual.body.id })).toBe(1);
    });
  });

  it('never records a payment that vanished in a reorg before reaching the threshold', async () => {
    const worker = await createTestWorker(env, taskQueue, chainEnv);
    await worker.runUntil(async () => {
      const { a, customer, address } = await payer();
      const invoice = await invoiceOf(a.api, customer.id, '300.00', '2027-01-01');
      await ensureChainWatchers(testDependencies({ env: chainEnv, temporal: { client: env.client, taskQueue } }));
      await scannedToTip();

      const before = await chain.snapshot();
      const gone = await chain.send(address.address, '0.2');
      await chain.mine(1);
      await scannedToTip();
      expect(await ChainPaymentRecord.findById(`ETH:${gone.hash.toLowerCase()}:0`).lean()).toMatchObject({ status: 'pending' });

      // The blocks holding the payment are replaced by a longer chain without it.
      await chain.revert(before);
      await chain.mine(CONFIRMATIONS + 3);
      await scannedToTip();
      await waitFor(async () => (await ChainPaymentRecord.findById(`ETH:${gone.hash.toLowerCase()}:0`).lean())?.status === 'dropped', 'payment dropped');

      // A payment in the new chain is still found (the watcher rescanned after the reorg).
      const kept = await chain.send(address.address, '0.1');
      await chain.mine(CONFIRMATIONS);
      await waitFor(async () => (await a.api.get(`/v1/invoices/${invoice.id}`)).body.status === 'paid', 'invoice paid by the payment that stayed');
      const txs = (await a.api.get('/v1/crypto_transactions')).body.crypto_transactions;
      expect(txs.map((t: any) => t.transaction_id)).toEqual([kept.hash.toLowerCase()]);
      expect(await CryptoTransaction.countDocuments({ transaction_id: gone.hash.toLowerCase() })).toBe(0);
    });
  });
});
