/**
 * Idempotency keys (src/services/writes/idempotency.ts, src/api/middleware/idempotency.ts): what is
 * kept and who may complete a reservation. The basic replay rules are in http.test.ts.
 */
import { useTestDatabase } from '../support/db';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import type { TemporalContext } from '../../src/temporal/context';
import { allocationWorkflows } from '../../src/temporal/clients/allocation';
import { createWorkflowStarts } from '../../src/services/writes/workflowStarts';
import { allocateTransaction } from '../../src/services/crypto/allocation';
import { testDependencies } from '../support/dependencies';
import pino from 'pino';
import { completeKey, reserveKey, Reservation } from '../../src/services/writes/idempotency';
import { IdempotencyKey } from '../../src/models/idempotencyKey';
import { BTC_P2PKH, ETH_EIP55_2, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { Product } from '../../src/models/product';
import { Price } from '../../src/models/price';
import { CryptoAddress } from '../../src/models/cryptoAddress';
import { Subscription } from '../../src/models/subscription';
import { WebhookEndpoint } from '../../src/models/webhookEndpoint';
import { PaymentClaimLink } from '../../src/models/paymentClaimLink';
import { CryptoTransaction } from '../../src/models/cryptoTransaction';
import { waitFor } from '../support/wait';
import { createHash } from 'node:crypto';
import { Invoice } from '../../src/models/invoice';
import { Event } from '../../src/models/event';
import { Customer } from '../../src/models/customer';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const scope = { accountId: 'acct_idempotency_test', sandbox: null };
let keySeq = 0;
const newKey = () => `key-${Date.now()}-${++keySeq}`;

function held(r: Reservation) {
  if (r.kind !== 'new') throw new Error(`expected a new reservation, got ${r.kind}`);
  return r;
}

/** Makes a reservation look like its request stopped answering `ms` ago. */
async function silence(r: { id: string }, ms: number) {
  const past = new Date(Date.now() - ms);
  await IdempotencyKey.collection.updateOne({ _id: r.id } as never, { $set: { created_at: past, heartbeat_at: past } });
}

/** The id of a live-scope key's reservation, as reserveKey computes it. */
const reservationIdOf = (accountId: string, key: string) => createHash('sha256').update(JSON.stringify([accountId, null, key])).digest('hex');

/** As if the request holding `key` was killed after its write: still `processing`, silent for two minutes (a retry takes it over). */
async function diedBeforeItsAnswer(accountId: string, key: string) {
  const id = reservationIdOf(accountId, key);
  await IdempotencyKey.collection.updateOne({ _id: id } as never, { $set: { state: 'processing', status: null, body: null } });
  await silence({ id }, 120_000);
}

describe('idempotency keys', () => {
  it('does not keep a 409 (allocation in progress): the same key retried once it clears runs again', async () => {
    const a = await newAccount(api.url);
    const { customer, accountWallet } = await customerWithWallet(a.api);
    // A payment to the account wallet that matches no invoice stays as credit for a manual allocation.
    const eth = (await a.api.post('/v1/crypto_addresses', { wallet_id: accountWallet.id, currency_code: 'ETH', address: ETH_EIP55_2 })).body;
    const invoice = await invoiceOf(a.api, customer.id, '500.00', '2027-01-01');
    // A Temporal client that accepts the allocation signal but runs nothing: allocation stays "in progress".
    const idle = {
      taskQueue: 'unused',
      client: { withDeadline: (_at: number, fn: () => Promise<unknown>) => fn(), workflow: { signalWithStart: async () => ({}) } },
    } as unknown as TemporalContext;
    // An app of its own allocates through it; this file's app (no Temporal) allocates inline.
    const busy = await startTestApi({ workflowOverrides: { allocation: allocationWorkflows(createWorkflowStarts(idle, pino({ level: 'silent' }))) } });
    const key = { 'Idempotency-Key': newKey() };
    const allocate = (through: TestApi) => client(through.url, a.token).post(`/v1/crypto_transactions/${tx.id}/allocations`, { invoice_id: invoice.id }, key);
    let tx: any;
    let first;
    try {
      tx = (await client(busy.url, a.token).post('/v1/crypto_transactions', { to_address_id: eth.id, amount: '0.01', currency_code: 'ETH', transaction_id: txHash() })).body;
      first = await allocate(busy);
    } finally {
      await busy.close();
    }
    expect(first.status).toBe(409);
    expect(first.body.error.code).toBe('allocation_in_progress');
    expect(await allocateTransaction(testDependencies(), tx.id)).toMatchObject({ status: 'allocated', allocations: 0, unallocated: '30.00' });
    const retried = await allocate(api);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.status).toBe(201);
    expect(retried.body.allocations).toEqual([expect.objectContaining({ invoice_id: invoice.id, amount_applied: '30.00' })]);
    // That answer is kept and replayed.
    const replayed = await allocate(api);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(retried.body);
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.amount_paid).toBe('30.00');
  });

  it('only the owner of a reservation completes or releases it: a request whose key was taken over changes nothing', async () => {
    const key = newKey();
    const first = held(await reserveKey(scope, key, 'POST', '/v1/things', { a: 1 }));
    try {
      expect((await reserveKey(scope, key, 'POST', '/v1/things', { a: 1 }).catch((e) => e)).code).toBe('idempotency_conflict');
      // The first request stops answering for over a minute: the next one takes the key over.
      await silence(first, 61_000);
      const second = held(await reserveKey(scope, key, 'POST', '/v1/things', { a: 1 }));
      expect(second.owner).not.toBe(first.owner);
      // The first, finishing late, neither overwrites nor frees the second's reservation.
      await completeKey(first, 201, { from: 'first' });
      await completeKey(first, 500, null);
      expect(await IdempotencyKey.findById(second.id).lean()).toMatchObject({ state: 'processing', owner: second.owner });
      await completeKey(second, 201, { from: 'second' });
      expect(await reserveKey(scope, key, 'POST', '/v1/things', { a: 1 })).toEqual({ kind: 'replay', status: 201, body: { from: 'second' } });
    } finally {
      first.stop();
    }
  });

  it('a running request keeps its key: it is taken over only after a minute without a heartbeat', async () => {
    const key = newKey();
    const running = held(await reserveKey(scope, key, 'POST', '/v1/things', {}, { heartbeatMs: 50 }));
    try {
      const started = (await IdempotencyKey.findById(running.id).lean<{ heartbeat_at: Date }>())!.heartbeat_at;
      // Reserved long ago, but its heartbeat is fresh: still in flight, not taken over.
      await IdempotencyKey.collection.updateOne({ _id: running.id } as never, { $set: { created_at: new Date(Date.now() - 5 * 60_000) } });
      // Waits for a beat to land (not a fixed 300 ms: on a loaded machine the 50 ms timer can slip).
      const beat = await waitFor(async () => {
        const at = (await IdempotencyKey.findById(running.id).lean<{ heartbeat_at: Date }>())!.heartbeat_at;
        return at.getTime() > started.getTime() && at;
      }, 'a heartbeat');
      expect(beat.getTime()).toBeGreaterThan(started.getTime());
      expect((await reserveKey(scope, key, 'POST', '/v1/things', {}).catch((e) => e)).code).toBe('idempotency_conflict');
      await completeKey(running, 200, { done: true });
      expect(await reserveKey(scope, key, 'POST', '/v1/things', {})).toEqual({ kind: 'replay', status: 200, body: { done: true } });
    } finally {
      running.stop();
    }
  });

  it('a heartbeat in flight when the request completes does not put its key back to processing', async () => {
    // FerretDB writes an update back as the whole document it read: a late beat would undo the outcome.
    for (let i = 0; i < 40; i++) {
      const key = newKey();
      const r = held(await reserveKey(scope, key, 'POST', '/v1/things', { i }, { heartbeatMs: 1 }));
      await new Promise((resolve) => setTimeout(resolve, i % 5));
      await completeKey(r, 201, { i });
      expect(await reserveKey(scope, key, 'POST', '/v1/things', { i })).toEqual({ kind: 'replay', status: 201, body: { i } });
    }
  });

  it('releases a key on a 409 and on a 5xx, keeps other answers', async () => {
    for (const [status, kept] of [[409, false], [500, false], [503, false], [422, true], [404, true], [201, true]] as const) {
      const key = newKey();
      const r = held(await reserveKey(scope, key, 'POST', '/v1/things', {}));
      await completeKey(r, status, { status });
      const again = await reserveKey(scope, key, 'POST', '/v1/things', {});
      if (kept) expect(again).toEqual({ kind: 'replay', status, body: { status } });
      else {
        expect(again.kind).toBe('new');
        await completeKey(held(again), 200, null);
      }
    }
  });

  it('a create retried after its request died between the write and the answer finds what it wrote: one invoice, its event once', async () => {
    const a = await newAccount(api.url);
    const customer = (await a.api.post('/v1/customers', { email: 'billed-once@example.com' })).body;
    const product = (await a.api.post('/v1/products', { name: 'Consulting' })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 25000 })).body;
    const key = newKey();
    const body = { customer_id: customer.id, due_date: '2027-01-01', line_items: [{ price_id: price.id }] };
    const first = await a.api.post('/v1/invoices', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    // As if the API process was killed after the invoice's write: the key still reads
    // `processing`, silent for two minutes (so the retry takes it over), and the event was never written.
    await diedBeforeItsAnswer(a.account_id, key);
    await Event.deleteMany({ account_id: a.account_id, event: 'invoice.created' });

    const retry = await a.api.post('/v1/invoices', body, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    expect(retry.body.total_amount).toBe(first.body.total_amount);
    expect(await Invoice.countDocuments({ account_id: a.account_id, customer_id: customer.id })).toBe(1);
    const events = await Event.find({ account_id: a.account_id, event: 'invoice.created' }).lean<{ payload: { id: string } }[]>();
    expect(events.map((e) => e.payload.id)).toEqual([first.body.id]);
    // The retry's answer is kept for the key now: a third try replays it.
    const replay = await a.api.post('/v1/invoices', body, { 'Idempotency-Key': key });
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
  });

  it('a customer created by a request that died before its answer is found by the retry, with its wallet and its event once', async () => {
    const a = await newAccount(api.url);
    const key = newKey();
    const body = { email: 'created-once@example.com' };
    const first = await a.api.post('/v1/customers', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    await diedBeforeItsAnswer(a.account_id, key);
    await Event.deleteMany({ account_id: a.account_id, event: 'customer.created' });

    const retry = await a.api.post('/v1/customers', body, { 'Idempotency-Key': key });
    // Not "email taken": the customer the first attempt wrote.
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    const events = await Event.find({ account_id: a.account_id, event: 'customer.created' }).lean<{ payload: { id: string } }[]>();
    expect(events.map((e) => e.payload.id)).toEqual([first.body.id]);
    const wallets = (await a.api.get('/v1/wallets')).body.wallets.filter((w: any) => w.owner_id === first.body.id);
    expect(wallets).toHaveLength(1);
  });

  it("a customer undone after a failure that had in fact written its wallet is made again by the retry, on that wallet", async () => {
    // The database went away during the wallet's insert: the insert landed, its answer did not,
    // the customer was undone, and the key released (a 5xx). The retry derives the same customer id.
    const a = await newAccount(api.url);
    const key = newKey();
    const body = { email: 'wallet-left-behind@example.com' };
    const first = await a.api.post('/v1/customers', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    await Customer.deleteOne({ _id: first.body.id });
    await IdempotencyKey.collection.deleteOne({ _id: reservationIdOf(a.account_id, key) } as never);
    await Event.deleteMany({ account_id: a.account_id, event: 'wallet.created', 'payload.owner_id': first.body.id });

    const retry = await a.api.post('/v1/customers', body, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    const wallets = (await a.api.get('/v1/wallets')).body.wallets.filter((w: any) => w.owner_id === first.body.id);
    expect(wallets).toHaveLength(1);
    // The wallet's event, which the first attempt may not have recorded, is there once.
    expect(await Event.countDocuments({ account_id: a.account_id, event: 'wallet.created', 'payload.owner_id': first.body.id })).toBe(1);
  });

  // Every create under a key: the retry after a request that died between its write and its
  // answer gets the resource the first attempt wrote (not a second one, not a 422 "taken"), and
  // the resource's created event is written once.
  const creates: { path: string; model: { countDocuments(f: object): Promise<number> }; event: string | null; body: (setup: Setup) => object }[] = [
    { path: '/v1/products', model: Product, event: 'product.created', body: () => ({ name: 'Made once' }) },
    { path: '/v1/prices', model: Price, event: 'price.created', body: (s) => ({ product_id: s.product.id, amount: 1200 }) },
    { path: '/v1/crypto_addresses', model: CryptoAddress, event: 'crypto_address.created', body: (s) => ({ wallet_id: s.wallet.id, currency_code: 'ETH', address: ETH_EIP55_2 }) },
    { path: '/v1/subscriptions', model: Subscription, event: 'subscription.created', body: (s) => ({ customer_id: s.customer.id, phases: [{ start_date: new Date(Date.now() + 86_400_000).toISOString(), items: [{ price_id: s.monthly.id }] }] }) },
    { path: '/v1/webhook_endpoints', model: WebhookEndpoint, event: null, body: () => ({ url: 'https://hooks.example.com/once', subscriptions: ['*'] }) },
    { path: '/v1/payment_claim_links', model: PaymentClaimLink, event: null, body: (s) => ({ customer_id: s.customer.id }) },
    { path: '/v1/crypto_transactions', model: CryptoTransaction, event: 'crypto_transaction.received', body: (s) => ({ to_address_id: s.btc.id, amount: '0.01', currency_code: 'BTC', transaction_id: s.hash }) },
  ];
  type Setup = { customer: any; wallet: any; product: any; monthly: any; btc: any; hash: string };

  it.each(creates)('POST $path retried after its request died before its answer finds what it wrote', async ({ path, model, event, body }) => {
    const a = await newAccount(api.url);
    const { customer, wallet } = await customerWithWallet(a.api);
    const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
    const monthly = (await a.api.post('/v1/prices', { product_id: product.id, amount: 1000, recurring: { interval: 'month', interval_count: 1 } })).body;
    const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_P2PKH })).body;
    const setup: Setup = { customer, wallet, product, monthly, btc, hash: txHash() };
    const key = newKey();
    const payload = body(setup);
    const first = await a.api.post(path, payload, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const before = await model.countDocuments({ account_id: a.account_id });
    await diedBeforeItsAnswer(a.account_id, key);
    if (event) await Event.deleteMany({ account_id: a.account_id, event });

    const retry = await a.api.post(path, payload, { 'Idempotency-Key': key });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    expect(await model.countDocuments({ account_id: a.account_id })).toBe(before);
    if (event) {
      const events = await Event.find({ account_id: a.account_id, event }).lean<{ payload: { id: string } }[]>();
      expect(events.map((e) => e.payload.id)).toEqual([first.body.id]);
      // A third attempt after another death writes no second event either.
      await diedBeforeItsAnswer(a.account_id, key);
      expect((await a.api.post(path, payload, { 'Idempotency-Key': key })).body.id).toBe(first.body.id);
      expect(await Event.countDocuments({ account_id: a.account_id, event })).toBe(1);
    }
  });

  it('a key reused with another body once it expired (24 h) creates a new customer, not the one its first use created', async () => {
    const a = await newAccount(api.url);
    const key = newKey();
    const first = await a.api.post('/v1/customers', { email: 'first-use@example.com' }, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    await silence({ id: reservationIdOf(a.account_id, key) }, 25 * 3600_000);
    const second = await a.api.post('/v1/customers', { email: 'second-use@example.com' }, { 'Idempotency-Key': key });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.email).toBe('second-use@example.com');
  });
});
