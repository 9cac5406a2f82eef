import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { useTestDatabase } from '../support/db';
import { timeSkippingEnvironment } from '../support/temporal';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { createTestWorker, fixtureHistory, recordHistory, replay } from '../support/workflows';
import { workflowIds } from '../../src/temporal/workflowIds';
import { Event } from '../../src/models/event';
import { Invoice, InvoiceDoc } from '../../src/models/invoice';
import { AllocationSlot, CryptoTransaction, CryptoTransactionDoc } from '../../src/models/cryptoTransaction';
import { allocateTransaction } from '../../src/services/crypto/allocation';
import { ORPHAN_AFTER_MS } from '../../src/services/billing/invoiceWrites';
import { FixedRateOracle, PriceOracle, PriceUnavailableError } from '../../src/services/crypto/priceOracle';
import type { Dependencies } from '../../src/dependencies';
import { testDependencies } from '../support/dependencies';
import { sumAmounts, compareAmounts } from '../../src/billing/money';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';

useTestDatabase();
const taskQueue = 'allocation-test';
let env: TestWorkflowEnvironment;
let api: TestApi;
/** What the test's own allocation calls run with: the API's settings and Temporal client. */
let deps: Dependencies;

beforeAll(async () => {
  env = await timeSkippingEnvironment();
  // No price at hand in this API (as with a price API whose minute it has not cached): the
  // allocations price the transactions, so this file's tests go through the worker's pricing.
  const unpriced: PriceOracle = { usdPrice: (currency) => new FixedRateOracle().usdPrice(currency) };
  api = await startTestApi({ priceOracle: unpriced }, {}, { client: env.client, taskQueue });
  deps = testDependencies({ temporal: { client: env.client, taskQueue } });
});
afterAll(async () => {
  await api?.close();
  await env?.teardown();
});

async function setup() {
  const a = await newAccount(api.url);
  const { customer, wallet } = await customerWithWallet(a.api);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  return { a, customer, btc, handle: () => env.client.workflow.getHandle(workflowIds.allocation(customer.id)) };
}

/** Every invoice of the customer: never over-applied; returns the sum applied. */
async function checkNoOverApply(customerId: string): Promise<string> {
  const invoices = await Invoice.find({ customer_id: customerId }).lean<InvoiceDoc[]>();
  for (const inv of invoices) {
    expect(compareAmounts(inv.amount_paid ?? '0.00', inv.total_amount)).toBeLessThanOrEqual(0);
    const entries = ((inv as any).crypto_allocations ?? []) as { amount_applied: string }[];
    expect(sumAmounts(entries.map((e) => e.amount_applied))).toBe(inv.amount_paid);
  }
  return sumAmounts(invoices.map((i) => i.amount_paid ?? '0.00'));
}

/** For every transaction: allocations + unallocated == its USD value, exactly. */
async function checkConservation(ids: string[]) {
  for (const id of ids) {
    const tx = await CryptoTransaction.findById(id).lean<CryptoTransactionDoc>();
    expect(tx?.allocated_at).toBeTruthy();
    expect(sumAmounts([...tx!.allocations.map((a) => a.amount_applied), tx!.unallocated_amount!])).toBe(tx!.usd_value);
  }
}

/**
 * Waits until every transaction is allocated. A start the request left to the outbox sweeper
 * (a slow Temporal under CI load) reaches a later run of the workflow, so one run's result is
 * not enough; awaiting each run's result lets the test server skip its idle timer.
 */
async function allAllocated(handle: () => ReturnType<TestWorkflowEnvironment['client']['workflow']['getHandle']>, ids: string[]) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await handle().result();
    if ((await CryptoTransaction.countDocuments({ _id: { $in: ids }, allocated_at: { $ne: null } })) === ids.length) return;
    if (Date.now() > deadline) throw new Error('transactions still unallocated after 60 s');
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('allocation workflow', () => {
  it('allocates a recorded payment and pays the invoice, once; the history replays', async () => {
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      const { a, customer, btc, handle } = await setup();
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
      const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() })).body;
      expect(tx.allocations).toEqual([]);
      expect(await handle().result()).toBe(1);
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
      const got = (await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body;
      expect(got.allocations).toEqual([expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })]);
      for (const name of ['crypto_transaction.received', 'crypto_transaction.allocated']) expect(await Event.countDocuments({ event: name, 'payload.id': tx.id })).toBe(1);
      expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);
      expect(await Event.countDocuments({ event: 'transaction_allocation.created', 'payload.crypto_transaction_id': tx.id })).toBe(1);
      // A replayed activity changes nothing.
      expect(await allocateTransaction(deps, tx.id)).toMatchObject({ status: 'already_allocated' });
      expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.id': invoice.id })).toBe(1);
      const history = await handle().fetchHistory();
      // The allocation runs as a local activity (a marker), never as an activity task.
      expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
      expect(history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toHaveLength(1);
      await replay(recordHistory('allocation-pays-invoice-current', history), 'replay-allocation');
      // Kept (read-only) from runs that chose local activities by the patch marker: such runs must still replay.
      await replay(fixtureHistory('allocation-pays-invoice-local-activities'), 'replay-allocation-local-activities');
      // Kept from before allocations were local activities: such runs must still replay.
      await replay(fixtureHistory('allocation-pays-invoice'), 'replay-allocation-activities');
    });
  });

  it('concurrent payments of one customer never over-apply an invoice', async () => {
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      const { a, customer, btc, handle } = await setup();
      for (const due of ['2027-01-01', '2027-02-01', '2027-03-01']) await invoiceOf(a.api, customer.id, '100.00', due);
      // Five payments of 70.00 USD at once: 350.00 for 300.00 of invoices.
      const txs = await Promise.all(
        [0, 1, 2, 3, 4].map(() => a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.0014', currency_code: 'BTC', transaction_id: txHash() })),
      );
      expect(txs.map((t) => t.status)).toEqual([201, 201, 201, 201, 201]);
      await allAllocated(handle, txs.map((t) => t.body.id));
      await checkConservation(txs.map((t) => t.body.id));
      expect(await checkNoOverApply(customer.id)).toBe('300.00');
      const statuses = (await a.api.get(`/v1/invoices?customer_id=${customer.id}`)).body.invoices.map((i: any) => i.status);
      expect(statuses).toEqual(['paid', 'paid', 'paid']);
      expect(await Event.countDocuments({ event: 'invoice.paid', 'payload.customer_id': customer.id })).toBe(3);
    });
  });

  it('keeps one idle timer while payments come (none cancelled), and completes a minute after the last', async () => {
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      const { a, customer, btc, handle } = await setup();
      const invoice = await invoiceOf(a.api, customer.id, '1000.00', '2027-01-01');
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash() });
        expect(tx.status).toBe(201);
        ids.push(tx.body.id);
        // Each allocated before the next comes: every payment meets the run waiting.
        const deadline = Date.now() + 20_000;
        while (!(await CryptoTransaction.findById(tx.body.id).lean<CryptoTransactionDoc>())?.allocated_at) {
          if (Date.now() > deadline) throw new Error('not allocated within 20 s');
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await allAllocated(handle, ids);
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.amount_paid).toBe('200.00');
      const history = await handle().fetchHistory();
      const events = history.events!;
      const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
      expect(markers).toBeGreaterThanOrEqual(2);
      expect(events.filter((e) => e.timerCanceledEventAttributes)).toEqual([]);
      // The idle minute's timer, and at most one more for what was left of the minute after the
      // last batch when it fired: each fired (fewer timers than payments), then the run completed.
      const started = events.filter((e) => e.timerStartedEventAttributes).length;
      expect(started).toBeGreaterThanOrEqual(1);
      expect(started).toBeLessThanOrEqual(2);
      expect(events.filter((e) => e.timerFiredEventAttributes)).toHaveLength(started);
      expect(events.at(-1)?.workflowExecutionCompletedEventAttributes).toBeTruthy();
      await replay(recordHistory('allocation-one-idle-timer-current', history), 'replay-allocation-one-idle-timer');
    });
  });

  it('retries while the price oracle is down, then allocates', async () => {
    let calls = 0;
    const priceOracle = {
      async usdPrice(currency: 'BTC' | 'ETH') {
        calls += 1;
        if (calls <= 2) throw new PriceUnavailableError('oracle down');
        return new FixedRateOracle().usdPrice(currency);
      },
    };
    const worker = await createTestWorker(env, taskQueue, {}, {}, { priceOracle });
    await worker.runUntil(async () => {
      const { a, customer, btc, handle } = await setup();
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
      const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() })).body;
      // At least this payment: the allocation sweeper may signal it again while it is still due
      // (the oracle down for seconds), and a repeated signal allocates nothing more.
      expect(await handle().result()).toBeGreaterThanOrEqual(1);
      // Two failed calls, then at least the successful one (other workflows of the worker may price too).
      expect(calls).toBeGreaterThanOrEqual(3);
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
      expect((await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body.allocations).toHaveLength(1);
    });
  });
});

describe('a manual allocation that died half-way', () => {
  it('does not block the customer\'s allocation workflow: its invoice slot is completed once stale, then the payment allocates', async () => {
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      const { a, customer, btc, handle } = await setup();
      // 0.004 BTC = 200.00 USD, no invoice yet: all credit.
      const credit = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.004', currency_code: 'BTC', transaction_id: txHash() })).body;
      await handle().result();
      // Due far ahead of the test server's clock, so its overdue timer does not change the invoice under the test.
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2999-01-01');
      // Every invoice write fails during this allocation (and its own attempt to finish): the process "dies" after the slot insert.
      const real = Invoice.collection.findOneAndUpdate.bind(Invoice.collection);
      const spy = jest.spyOn(Invoice.collection, 'findOneAndUpdate').mockImplementation(((f: any, u: any, o: any) => {
        if (u?.$push?.crypto_allocations) throw new Error('connection reset');
        return real(f, u, o);
      }) as never);
      try {
        expect((await a.api.post(`/v1/crypto_transactions/${credit.id}/allocations`, { invoice_id: invoice.id, amount_applied: '40.00' })).status).toBe(500);
      } finally {
        spy.mockRestore();
      }
      expect(await AllocationSlot.findById(`${invoice.id}#0`).lean()).toBeTruthy();
      // A minute later (the slot's writer is dead, not slow), a new payment of the customer arrives.
      const stale = new Date(Date.now() - ORPHAN_AFTER_MS - 1000);
      const doc = (await CryptoTransaction.findById(credit.id).lean<CryptoTransactionDoc>())!;
      await CryptoTransaction.updateOne({ _id: credit.id }, { $set: { allocated_at: new Date(stale.getTime() - 1000), allocations: doc.allocations.map((e) => ({ ...e, created_at: stale })) } });
      await AllocationSlot.updateOne({ _id: `${invoice.id}#0` }, { $set: { created_at: stale } });
      const payment = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash() })).body;
      // Bounded by the test's timeout, not a wall-clock race: on a loaded 2-core machine the
      // activity's retries (their backoff skipped by the test server) took longer than 30 s.
      await handle().result();
      // The orphaned 40.00 was completed, then the payment's 50.00 applied: 90.00 of 100.00.
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'pending', amount_paid: '90.00' });
      expect((await a.api.get(`/v1/crypto_transactions/${credit.id}`)).body).toMatchObject({ unallocated_amount: '160.00', allocations: [expect.objectContaining({ amount_applied: '40.00' })] });
      expect((await a.api.get(`/v1/crypto_transactions/${payment.id}`)).body).toMatchObject({ unallocated_amount: '0.00', allocations: [expect.objectContaining({ amount_applied: '50.00' })] });
      expect(await checkNoOverApply(customer.id)).toBe('90.00');
    });
  });
});

describe('allocation without serialization', () => {
  it('conditional writes alone keep concurrent allocations from over-applying', async () => {
    const { a, customer, btc } = await setup();
    for (const due of ['2027-01-01', '2027-02-01']) await invoiceOf(a.api, customer.id, '100.00', due);
    // Recorded directly (no workflow), then allocated all at once.
    const docs = await CryptoTransaction.insertMany(
      [0, 1, 2, 3, 4, 5].map((i) => ({
        _id: `trxn_concurrent${i}${customer.id.slice(5, 15)}`,
        account_id: a.account_id,
        sandbox: null,
        currency: 'BTC',
        amount: '0.0009',
        transaction_id: txHash(),
        transaction_source: 'manual_entry',
        timestamp: new Date(),
        to_address_id: btc.id,
        to_address: btc.address,
        wallet_id: btc.wallet_id,
        customer_id: customer.id,
        dedupe_key: `k-${customer.id}-${i}`,
      })),
    );
    const ids = docs.map((d) => String(d._id));
    await Promise.all(ids.map((id) => allocateTransaction(deps, id, { attempts: 50 })));
    await checkConservation(ids);
    // 6 x 45.00 = 270.00 for 200.00 of invoices.
    expect(await checkNoOverApply(customer.id)).toBe('200.00');
    const unallocated = sumAmounts((await CryptoTransaction.find({ _id: { $in: ids } }).lean<CryptoTransactionDoc[]>()).map((t) => t.unallocated_amount!));
    expect(unallocated).toBe('70.00');
  });

  it('a replay of an account-wallet payment after a crash does not pay a second invoice', async () => {
    const a = await newAccount(api.url);
    const { customer, accountWallet } = await customerWithWallet(a.api);
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: accountWallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
    // Two invoices the payment matches (100.00 = 0.002 BTC): it pays the older one only.
    const older = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const newer = await invoiceOf(a.api, customer.id, '100.00', '2027-02-01');
    const [doc] = await CryptoTransaction.insertMany([{
      _id: `trxn_acctreplay${customer.id.slice(5, 15)}`, account_id: a.account_id, sandbox: null, currency: 'BTC', amount: '0.002',
      transaction_id: txHash(), transaction_source: 'manual_entry', timestamp: new Date(), to_address_id: btc.id, to_address: btc.address,
      wallet_id: btc.wallet_id, customer_id: null, dedupe_key: `k-acct-${customer.id}`,
    }]);
    const id = String(doc._id);
    expect(await allocateTransaction(deps, id)).toMatchObject({ status: 'allocated', allocations: 1 });
    // As if the process died after paying the invoice, before the transaction was finished.
    await CryptoTransaction.updateOne({ _id: id }, { $set: { allocations: [], unallocated_amount: null, allocated_at: null } });
    expect(await allocateTransaction(deps, id)).toMatchObject({ status: 'allocated', allocations: 1, unallocated: '0.00' });
    expect((await a.api.get(`/v1/invoices/${older.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    expect((await a.api.get(`/v1/invoices/${newer.id}`)).body).toMatchObject({ status: 'pending', amount_paid: '0.00' });
    await checkConservation([id]);
  });
});
