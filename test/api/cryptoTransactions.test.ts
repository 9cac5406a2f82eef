import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { Event } from '../../src/models/event';
import { BTC_P2PKH, BTC_BECH32, ETH_EIP55, ETH_EIP55_2, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';
import { FixedRateOracle, PriceOracle, PriceUnavailableError } from '../../src/services/crypto/priceOracle';
import { SwitchableOracle, testDependencies } from '../support/dependencies';
import { allocateTransaction } from '../../src/services/crypto/allocation';
import { ORPHAN_AFTER_MS } from '../../src/services/billing/invoiceWrites';
import { Invoice } from '../../src/models/invoice';
import { AllocationSlot, CryptoTransaction, CryptoTransactionDoc } from '../../src/models/cryptoTransaction';

useTestDatabase();
let api: TestApi;
/** What this file's API prices with; a test points it elsewhere and back. */
const oracle = new SwitchableOracle();
/** What the test's own allocation calls run with (no Temporal: as the API's). */
const deps = testDependencies({ priceOracle: oracle });
beforeAll(async () => {
  api = await startTestApi({ priceOracle: oracle });
});
afterEach(() => {
  oracle.current = new FixedRateOracle();
});
afterAll(() => api.close());

async function setup() {
  const a = await newAccount(api.url);
  const { customer, wallet, accountWallet } = await customerWithWallet(a.api);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const eth = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'ETH', address: ETH_EIP55 })).body;
  const acctEth = (await a.api.post('/v1/crypto_addresses', { wallet_id: accountWallet.id, currency_code: 'ETH', address: ETH_EIP55_2 })).body;
  return { a, customer, wallet, btc, eth, acctEth };
}

const eventsOf = (name: string, id: string) => Event.find({ event: name, 'payload.id': id }).lean();

describe('crypto transactions', () => {
  it('records a manual entry with its precision, then allocates it: oldest due date first, partial, then credit', async () => {
    const { a, customer, btc, eth } = await setup();
    const later = await invoiceOf(a.api, customer.id, '30.00', '2027-03-01');
    const oldest = await invoiceOf(a.api, customer.id, '100.00', '2027-01-15');
    const middle = await invoiceOf(a.api, customer.id, '50.00', '2027-02-01');
    // 0.00240000 BTC at 50,000 USD = 120.00 USD: pays `oldest`, 20.00 towards `middle`.
    const hash = txHash('BTC');
    const res = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.00240000', currency_code: 'BTC', transaction_id: hash, timestamp: '2026-11-01T10:00:00.000Z' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'crypto_transaction',
      amount: '0.00240000',
      transaction_id: hash,
      amount_mismatch: null,
      transaction_source: 'manual_entry',
      timestamp: '2026-11-01T10:00:00.000Z',
      currency: 'BTC',
      from_address_id: null,
      from_address: null,
      to_address_id: btc.id,
      to_address: BTC_BECH32,
      allocations: [],
    });
    expect(res.body.id).toMatch(/^trxn_/);
    const tx = (await a.api.get(`/v1/crypto_transactions/${res.body.id}`)).body;
    expect(tx.usd_value).toBe('120.00');
    expect(tx.unallocated_amount).toBe('0.00');
    expect(tx.allocations.map((x: any) => [x.invoice_id, x.amount_applied])).toEqual([
      [oldest.id, '100.00'],
      [middle.id, '20.00'],
    ]);
    for (const al of tx.allocations) expect(al.id).toMatch(/^alloc_/);
    const inv = async (id: string) => (await a.api.get(`/v1/invoices/${id}`)).body;
    expect(await inv(oldest.id)).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    expect(await inv(middle.id)).toMatchObject({ status: 'pending', amount_paid: '20.00' });
    expect(await inv(later.id)).toMatchObject({ status: 'pending', amount_paid: '0.00' });
    expect(await eventsOf('crypto_transaction.received', tx.id)).toHaveLength(1);
    expect(await eventsOf('crypto_transaction.allocated', tx.id)).toHaveLength(1);
    expect(await eventsOf('invoice.paid', oldest.id)).toHaveLength(1);
    expect(await eventsOf('invoice.paid', middle.id)).toHaveLength(0);
    expect(await Event.countDocuments({ event: 'transaction_allocation.created', 'payload.crypto_transaction_id': tx.id })).toBe(2);

    // Allocating again changes nothing and records nothing new.
    expect(await allocateTransaction(deps, tx.id)).toMatchObject({ status: 'already_allocated', allocations: 2 });
    expect((await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body).toEqual(tx);
    expect(await Event.countDocuments({ event: 'transaction_allocation.created', 'payload.crypto_transaction_id': tx.id })).toBe(2);
    expect(await eventsOf('invoice.paid', oldest.id)).toHaveLength(1);

    // 1.5 ETH at 3,000 = 4,500.00: pays the rest (30.00 + 30.00), 4,440.00 stays as credit.
    const big = (await a.api.post('/v1/crypto_transactions', { to_address_id: eth.id, amount: '1.5', currency: 'ETH', transaction_id: txHash() })).body;
    const bigTx = (await a.api.get(`/v1/crypto_transactions/${big.id}`)).body;
    expect(bigTx.amount).toBe('1.5');
    expect(bigTx.unallocated_amount).toBe('4440.00');
    expect(await inv(middle.id)).toMatchObject({ status: 'paid', amount_paid: '50.00' });
    expect(await inv(later.id)).toMatchObject({ status: 'paid', amount_paid: '30.00' });

    // Manual allocation of the credit to a new invoice; then the errors of that route.
    const extra = await invoiceOf(a.api, customer.id, '40.00', '2027-05-01');
    const manual = await a.api.post(`/v1/crypto_transactions/${big.id}/allocations`, { invoice_id: extra.id, amount_applied: '15.00' });
    expect(manual.status).toBe(201);
    expect(manual.body.unallocated_amount).toBe('4425.00');
    expect(manual.body.allocations.at(-1)).toMatchObject({ invoice_id: extra.id, amount_applied: '15.00' });
    expect(await inv(extra.id)).toMatchObject({ status: 'pending', amount_paid: '15.00' });
    const rest = await a.api.post(`/v1/crypto_transactions/${big.id}/allocations`, { invoice_id: extra.id });
    expect(rest.body.unallocated_amount).toBe('4400.00');
    expect(await inv(extra.id)).toMatchObject({ status: 'paid', amount_paid: '40.00' });
    expect(await eventsOf('invoice.paid', extra.id)).toHaveLength(1);
    const closed = await a.api.post(`/v1/crypto_transactions/${big.id}/allocations`, { invoice_id: extra.id });
    expect(closed.status).toBe(422);
    expect(closed.body.error.param).toBe('invoice_id');
    const another = await invoiceOf(a.api, customer.id, '10.00', '2027-06-01');
    const tooMuch = await a.api.post(`/v1/crypto_transactions/${big.id}/allocations`, { invoice_id: another.id, amount_applied: '10.01' });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error.param).toBe('amount_applied');
    expect((await a.api.post(`/v1/crypto_transactions/${tx.id}/allocations`, { invoice_id: another.id })).body.error.param).toBe('amount_applied');
    expect((await a.api.post(`/v1/crypto_transactions/${big.id}/allocations`, { invoice_id: 'inv_missing' })).status).toBe(404);
    expect((await a.api.post(`/v1/crypto_transactions/${big.id}/allocations`, {})).status).toBe(400);
  });

  it('answers the errors: address, currency, amount, duplicate', async () => {
    const { a, btc, eth } = await setup();
    const b = await newAccount(api.url);
    const post = (body: object) => a.api.post('/v1/crypto_transactions', body);
    const base = { to_address_id: btc.id, amount: '0.1', currency_code: 'BTC', transaction_id: txHash() };
    const noAddr = await post({ ...base, to_address_id: 'addr_missing' });
    expect(noAddr.status).toBe(404);
    expect(noAddr.body.error).toMatchObject({ code: 'resource_not_found', message: 'Crypto address not found', param: 'to_address_id' });
    const doge = await post({ ...base, currency_code: 'DOGE' });
    expect(doge.status).toBe(404);
    expect(doge.body.error).toMatchObject({ message: 'Currency not found: DOGE', param: 'currency_code' });
    const mismatch = await post({ ...base, currency_code: 'ETH' });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.error.param).toBe('currency_code');
    for (const amount of ['0.123456789', '-1', '0', '1e3', ' 1', '1.', '.5', 'abc']) {
      const r = await post({ ...base, amount });
      expect([r.status, r.body.error.param]).toEqual([422, 'amount']);
    }
    expect((await post({ ...base, to_address_id: eth.id, currency_code: 'ETH', amount: '0.123456789012345678' })).status).toBe(201);
    expect((await post({ ...base, to_address_id: eth.id, currency_code: 'ETH', amount: '0.1234567890123456789' })).status).toBe(422);
    expect((await post({ ...base, timestamp: 'yesterday' })).body.error.param).toBe('timestamp');
    expect((await post({ ...base, amount: 5 })).status).toBe(422);
    expect((await post({ to_address_id: btc.id, currency_code: 'BTC', transaction_id: 'x' })).status).toBe(400);

    const hash = txHash();
    expect((await post({ ...base, transaction_id: hash })).status).toBe(201);
    const dup = await post({ ...base, transaction_id: hash.toUpperCase(), amount: '0.2' });
    expect(dup.status).toBe(422);
    expect(dup.body.error).toMatchObject({ code: 'parameter_invalid', param: 'transaction_id' });
    // Same hash to another address is another output: fine.
    const other = (await a.api.post('/v1/crypto_addresses', { wallet_id: btc.wallet_id, currency_code: 'BTC', address: BTC_P2PKH })).body;
    expect((await post({ ...base, to_address_id: other.id, transaction_id: hash })).status).toBe(201);
    // Another account's address is not found.
    expect((await b.api.post('/v1/crypto_transactions', base)).status).toBe(404);
  });

  it('one canonical hash per currency: stored, echoed and deduplicated in every spelling; anything else refused', async () => {
    const { a, btc, eth } = await setup();
    const post = (body: object) => a.api.post('/v1/crypto_transactions', body);
    const body = txHash('BTC');

    // BTC: 64 lowercase hex; a 0x prefix (any case) is stripped.
    const first = await post({ to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: `0x${body}` });
    expect(first.status).toBe(201);
    expect(first.body.transaction_id).toBe(body);
    expect((await a.api.get(`/v1/crypto_transactions/${first.body.id}`)).body.transaction_id).toBe(body);
    const [received] = await eventsOf('crypto_transaction.received', first.body.id);
    expect((received as any).payload.transaction_id).toBe(body);
    for (const spelling of [body, body.toUpperCase(), `0X${body.toUpperCase()}`, ` ${body} `]) {
      const again = await post({ to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: spelling });
      expect(again.status).toBe(422);
      expect(again.body.error).toMatchObject({ code: 'parameter_invalid', param: 'transaction_id' });
      expect(again.body.error.message).toContain(first.body.id);
    }

    // ETH: 0x + 64 lowercase hex; 0X and a missing prefix are normalised.
    const ethBody = txHash('BTC');
    const eth1 = await post({ to_address_id: eth.id, amount: '0.01', currency_code: 'ETH', transaction_id: ethBody.toUpperCase() });
    expect(eth1.status).toBe(201);
    expect(eth1.body.transaction_id).toBe(`0x${ethBody}`);
    for (const spelling of [`0x${ethBody}`, `0X${ethBody}`, ethBody]) {
      const again = await post({ to_address_id: eth.id, amount: '0.01', currency_code: 'ETH', transaction_id: spelling });
      expect([again.status, again.body.error.param]).toEqual([422, 'transaction_id']);
      expect(again.body.error.message).toContain(eth1.body.id);
    }
    expect(await CryptoTransaction.countDocuments({ to_address_id: btc.id })).toBe(1);
    expect(await CryptoTransaction.countDocuments({ to_address_id: eth.id })).toBe(1);

    // Not a hash of its currency: 422 on transaction_id, nothing recorded.
    for (const [currency, to, id] of [['BTC', btc.id, 'abc123'], ['BTC', btc.id, `${body}00`], ['ETH', eth.id, `0x${ethBody.slice(2)}`], ['ETH', eth.id, `0x0x${ethBody}`], ['BTC', btc.id, `${body.slice(0, 63)}z`]]) {
      const r = await post({ to_address_id: to, amount: '0.001', currency_code: currency, transaction_id: id });
      expect(r.status).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'transaction_id' });
      expect(r.body.errors.transaction_id[0]).toContain(currency);
    }
  });

  it('a repeated entry of a transaction left unallocated (first attempt failed after its insert) is refused and allocates it, once', async () => {
    const { a, customer, btc } = await setup();
    const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const body = { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() };
    oracle.current = { usdPrice: async () => { throw new PriceUnavailableError('down'); } };
    const first = await a.api.post('/v1/crypto_transactions', body);
    oracle.current = new FixedRateOracle();
    expect(first.status).toBe(201);
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('pending');
    const again = await a.api.post('/v1/crypto_transactions', body);
    expect(again.status).toBe(422);
    expect(again.body.error.param).toBe('transaction_id');
    expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    expect((await a.api.get(`/v1/crypto_transactions/${first.body.id}`)).body.allocations).toHaveLength(1);
    expect(await eventsOf('crypto_transaction.received', first.body.id)).toHaveLength(1);
    // Allocated now: a third entry is refused and changes nothing.
    expect((await a.api.post('/v1/crypto_transactions', body)).status).toBe(422);
    expect(await eventsOf('crypto_transaction.allocated', first.body.id)).toHaveLength(1);
  });

  it('an allocation that paid invoices and died before finishing its transaction is finished by its replay, nothing applied twice, the paid invoices found by its slots', async () => {
    const { a, customer, btc } = await setup();
    const first = await invoiceOf(a.api, customer.id, '50.00', '2027-01-01');
    const second = await invoiceOf(a.api, customer.id, '100.00', '2027-02-01');
    const untouched = await invoiceOf(a.api, customer.id, '80.00', '2027-03-01');
    // The transaction's finish fails: both invoices are paid in full, the transaction still unallocated.
    const real = CryptoTransaction.collection.findOneAndUpdate.bind(CryptoTransaction.collection);
    const spy = jest.spyOn(CryptoTransaction.collection, 'findOneAndUpdate').mockImplementation(((f: any, u: any, o: any) => {
      if (u?.$set?.allocated_at) throw new Error('connection reset');
      return real(f, u, o);
    }) as never);
    let id: string;
    try {
      // 0.003 BTC = 150.00 USD: 50.00 and 100.00.
      const res = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.003', currency_code: 'BTC', transaction_id: txHash() });
      expect(res.status).toBe(500);
      id = (await CryptoTransaction.findOne({ to_address_id: btc.id }).lean<CryptoTransactionDoc>())!._id;
    } finally {
      spy.mockRestore();
    }
    expect((await CryptoTransaction.findById(id).lean<CryptoTransactionDoc>())!.allocated_at).toBeFalsy();
    for (const inv of [first, second]) expect((await a.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('paid');
    // Neither paid invoice is open any more: the replay finds them by the slots the attempt took.
    expect(await allocateTransaction(deps, id)).toMatchObject({ status: 'allocated', allocations: 2, unallocated: '0.00' });
    const tx = (await a.api.get(`/v1/crypto_transactions/${id}`)).body;
    expect(tx.allocations.map((x: any) => [x.invoice_id, x.amount_applied])).toEqual([[first.id, '50.00'], [second.id, '100.00']]);
    expect((await a.api.get(`/v1/invoices/${first.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '50.00' });
    expect((await a.api.get(`/v1/invoices/${second.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
    expect((await a.api.get(`/v1/invoices/${untouched.id}`)).body).toMatchObject({ status: 'pending', amount_paid: '0.00' });
    expect(await eventsOf('invoice.paid', first.id)).toHaveLength(1);
    expect(await eventsOf('invoice.paid', second.id)).toHaveLength(1);
    expect(await eventsOf('crypto_transaction.allocated', id)).toHaveLength(1);
    expect(await Event.countDocuments({ event: 'transaction_allocation.created', 'payload.crypto_transaction_id': id })).toBe(2);
  });

  it('a manual allocation failing half-way never blocks the invoice: completed or undone in the request, or after a crash by the next allocation', async () => {
    const { a, customer, btc } = await setup();
    // 0.004 BTC = 200.00 USD with no open invoice: all credit.
    const tx1 = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.004', currency_code: 'BTC', transaction_id: txHash() })).body;
    const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const allocate = (amount: string) => a.api.post(`/v1/crypto_transactions/${tx1.id}/allocations`, { invoice_id: invoice.id, amount_applied: amount });
    const txNow = async () => (await a.api.get(`/v1/crypto_transactions/${tx1.id}`)).body;
    const invoiceNow = async () => (await a.api.get(`/v1/invoices/${invoice.id}`)).body;
    const realInvoiceUpdate = Invoice.collection.findOneAndUpdate.bind(Invoice.collection);
    const realTxUpdate = CryptoTransaction.findOneAndUpdate.bind(CryptoTransaction);
    /** Makes the invoice write of an allocation (after its slot is taken) fail `times` times. */
    const failInvoiceWrites = (times: number) => {
      let left = times;
      return jest.spyOn(Invoice.collection, 'findOneAndUpdate').mockImplementation(((f: any, u: any, o: any) => {
        if (u?.$push?.crypto_allocations && left-- > 0) throw new Error('connection reset');
        return realInvoiceUpdate(f, u, o);
      }) as never);
    };

    // The invoice write fails once: the request completes it (its slot is the invoice's) and answers 201.
    let spy = failInvoiceWrites(1);
    try {
      expect((await allocate('30.00')).status).toBe(201);
    } finally {
      spy.mockRestore();
    }
    expect(await invoiceNow()).toMatchObject({ amount_paid: '30.00', status: 'pending' });
    expect(await txNow()).toMatchObject({ unallocated_amount: '170.00' });

    // The reservation write fails: the request undoes what it took and answers 500; nothing is left behind.
    const txSpy = jest.spyOn(CryptoTransaction, 'findOneAndUpdate').mockImplementation(((f: any, u: any, o: any) => {
      if (u?.$push?.allocations) throw new Error('connection reset');
      return realTxUpdate(f, u, o);
    }) as never);
    try {
      expect((await allocate('5.00')).status).toBe(500);
    } finally {
      txSpy.mockRestore();
    }
    expect(await txNow()).toMatchObject({ unallocated_amount: '170.00', allocations: [expect.objectContaining({ amount_applied: '30.00' })] });

    // The invoice keeps failing (as if the process died after taking the invoice's slot): 500, slot and reservation left.
    spy = failInvoiceWrites(100);
    try {
      expect((await allocate('20.00')).status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    expect(await invoiceNow()).toMatchObject({ amount_paid: '30.00' });
    // Within a minute it may still be in progress: a conflict, not a takeover.
    expect((await allocate('10.00')).body.error.code).toBe('allocation_conflict');
    expect(await txNow()).toMatchObject({ unallocated_amount: '150.00' });
    // A minute later the next allocation to the invoice completes it first, then goes through.
    const stale = new Date(Date.now() - ORPHAN_AFTER_MS - 1000);
    const doc = (await CryptoTransaction.findById(tx1.id).lean<CryptoTransactionDoc>())!;
    const orphan = doc.allocations.at(-1)!;
    expect(orphan.amount_applied).toBe('20.00');
    const earlier = (ms: number) => new Date(stale.getTime() - ms);
    await CryptoTransaction.updateOne({ _id: tx1.id }, { $set: { allocated_at: earlier(10_000), allocations: doc.allocations.map((e) => ({ ...e, created_at: e._id === orphan._id ? stale : earlier(5_000) })) } });
    await AllocationSlot.updateOne({ _id: `${invoice.id}#1` }, { $set: { created_at: stale } });
    // Two at once: one settles the orphan (completes it, once), the other waits its turn or answers 409.
    const both = await Promise.all([allocate('10.00'), allocate('10.00')]);
    expect(both.every((r) => r.status === 201 || (r.status === 409 && r.body.error.code === 'allocation_conflict'))).toBe(true);
    let made = both.filter((r) => r.status === 201).length;
    for (let i = 0; made < 2 && i < 5; i++) if ((await allocate('10.00')).status === 201) made += 1;
    expect(made).toBe(2);
    const after = await txNow();
    expect(after.allocations.map((e: any) => e.amount_applied)).toEqual(['30.00', '20.00', '10.00', '10.00']);
    expect(after.unallocated_amount).toBe('130.00');
    const paid = (await Invoice.findById(invoice.id).lean())! as any;
    expect(paid.amount_paid).toBe('70.00');
    // Every allocation is on the invoice exactly once, and nothing else is.
    expect(paid.crypto_allocations.map((e: any) => e.id).sort()).toEqual(after.allocations.map((e: any) => e.id).sort());
    expect(await Event.countDocuments({ event: 'transaction_allocation.created', 'payload.id': orphan._id })).toBe(1);
    expect(await Event.countDocuments({ event: 'transaction_allocation.created', 'payload.crypto_transaction_id': tx1.id })).toBe(4);
    // The automatic allocation of a later payment is not blocked either: 0.001 BTC = 50.00 pays the rest (30.00).
    const tx2 = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash() })).body;
    expect((await a.api.get(`/v1/crypto_transactions/${tx2.id}`)).body).toMatchObject({ unallocated_amount: '20.00', allocations: [expect.objectContaining({ invoice_id: invoice.id, amount_applied: '30.00' })] });
    expect(await invoiceNow()).toMatchObject({ amount_paid: '100.00', status: 'paid' });
  });

  it('lists by timestamp desc and is a 404 from another account or the sandbox, for every route', async () => {
    const { a, btc, customer } = await setup();
    const b = await newAccount(api.url);
    const at = ['2026-01-02T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'];
    const ids: string[] = [];
    for (const t of at) ids.push((await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash(), timestamp: t })).body.id);
    const list = (await a.api.get('/v1/crypto_transactions')).body;
    expect(list.crypto_transactions.map((t: any) => t.timestamp)).toEqual([at[1], at[2], at[0]]);
    expect(list.pagination.count).toBe(3);
    const invoice = await invoiceOf(a.api, customer.id, '5.00', '2027-01-01');
    for (const c of [b.api, a.sandbox]) {
      expect((await c.get(`/v1/crypto_transactions/${ids[0]}`)).status).toBe(404);
      expect((await c.post(`/v1/crypto_transactions/${ids[0]}/allocations`, { invoice_id: invoice.id })).status).toBe(404);
      expect((await c.get('/v1/crypto_transactions')).body.pagination.count).toBe(0);
    }
    expect((await a.api.get('/v1/crypto_transactions?page=0')).status).toBe(422);
  });

  it('matches an account-wallet payment to the oldest open invoice whose balance equals its value within slippage', async () => {
    const { a, customer, acctEth } = await setup();
    await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
    const match = await invoiceOf(a.api, customer.id, '300.00', '2027-02-01');
    const match2 = await invoiceOf(a.api, customer.id, '300.00', '2027-03-01');
    // 0.0999 ETH = 299.70 USD: within 0.5% of 300.00.
    const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: acctEth.id, amount: '0.0999', currency_code: 'ETH', transaction_id: txHash() })).body;
    const got = (await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body;
    expect(got.allocations).toEqual([expect.objectContaining({ invoice_id: match.id, amount_applied: '299.70' })]);
    expect((await a.api.get(`/v1/invoices/${match.id}`)).body.status).toBe('paid');
    expect((await a.api.get(`/v1/invoices/${match2.id}`)).body.status).toBe('pending');
    // No match: left unallocated.
    const none = (await a.api.post('/v1/crypto_transactions', { to_address_id: acctEth.id, amount: '0.05', currency_code: 'ETH', transaction_id: txHash() })).body;
    const noneTx = (await a.api.get(`/v1/crypto_transactions/${none.id}`)).body;
    expect(noneTx.allocations).toEqual([]);
    expect(noneTx.unallocated_amount).toBe('150.00');
  });

  it('pays overdue invoices as open ones, a customer payment and an account-wallet payment alike, and never a paid or canceled one', async () => {
    const { a, customer, btc, acctEth } = await setup();
    const paid = await invoiceOf(a.api, customer.id, '40.00', '2026-10-01');
    const canceled = await invoiceOf(a.api, customer.id, '40.00', '2026-10-02');
    const overdue = await invoiceOf(a.api, customer.id, '40.00', '2026-10-03');
    const pending = await invoiceOf(a.api, customer.id, '40.00', '2027-01-01');
    const overdueToo = await invoiceOf(a.api, customer.id, '300.00', '2026-10-04');
    // As the overdue marking and earlier payments left them.
    await Invoice.updateOne({ _id: paid.id }, { $set: { status: 'paid', amount_paid: '40.00' } });
    await Invoice.updateOne({ _id: canceled.id }, { $set: { status: 'canceled' } });
    await Invoice.updateMany({ _id: { $in: [overdue.id, overdueToo.id] } }, { $set: { status: 'overdue' } });
    // 0.0999 ETH = 299.70 USD to the account's wallet: the overdue 300.00 within slippage.
    const matched = (await a.api.post('/v1/crypto_transactions', { to_address_id: acctEth.id, amount: '0.0999', currency_code: 'ETH', transaction_id: txHash('ETH') })).body;
    expect((await a.api.get(`/v1/crypto_transactions/${matched.id}`)).body.allocations).toEqual([expect.objectContaining({ invoice_id: overdueToo.id, amount_applied: '299.70' })]);
    // 0.0016 BTC = 80.00 USD to the customer's: the overdue 40.00 first (oldest due date), then the pending one.
    const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.0016', currency_code: 'BTC', transaction_id: txHash() })).body;
    const got = (await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body;
    expect(got.allocations.map((x: any) => [x.invoice_id, x.amount_applied])).toEqual([[overdue.id, '40.00'], [pending.id, '40.00']]);
    expect(got.unallocated_amount).toBe('0.00');
    expect((await a.api.get(`/v1/invoices/${paid.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '40.00' });
    expect((await a.api.get(`/v1/invoices/${canceled.id}`)).body).toMatchObject({ status: 'canceled', amount_paid: '0.00' });
  });

  it('a price at hand prices the transaction as it is recorded; its allocation asks no oracle', async () => {
    const { a, customer, btc } = await setup();
    const asked: string[] = [];
    const atHand: PriceOracle = {
      knownPrice: (currency, at) => (currency === 'BTC' && at < new Date('2026-06-01T00:00:00Z') ? '45000' : null),
      async usdPrice(currency, at) {
        asked.push(`${currency}@${at.toISOString()}`);
        return '60000';
      },
    };
    oracle.current = atHand;
    const inv = await invoiceOf(a.api, customer.id, '45.00', '2027-01-01');
    const res = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash(), timestamp: '2026-05-01T12:00:00.000Z' });
    expect(res.status).toBe(201);
    expect(res.body.usd_value).toBe('45.00');
    expect((await CryptoTransaction.findById(res.body.id).lean<CryptoTransactionDoc>())?.usd_price).toBe('45000');
    expect((await eventsOf('crypto_transaction.received', res.body.id))[0].payload.usd_value).toBe('45.00');
    expect((await a.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('paid');
    expect((await a.api.get(`/v1/crypto_transactions/${res.body.id}`)).body).toMatchObject({ usd_value: '45.00', unallocated_amount: '0.00' });
    expect(asked).toEqual([]);
    // Not at hand for this moment: recorded unpriced, then priced by its allocation.
    const later = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash(), timestamp: '2026-07-01T12:00:00.000Z' });
    expect(later.body.usd_value).toBeNull();
    expect((await a.api.get(`/v1/crypto_transactions/${later.body.id}`)).body.usd_value).toBe('60.00');
    expect(asked).toEqual(['BTC@2026-07-01T12:00:00.000Z']);
  });

  it('prices at the transaction timestamp; an oracle failure leaves it unallocated and a manual allocation answers 502', async () => {
    const { a, customer, btc } = await setup();
    const seen: string[] = [];
    const dated: PriceOracle = {
      async usdPrice(currency, at) {
        seen.push(`${currency}@${at.toISOString()}`);
        return at < new Date('2026-06-01T00:00:00Z') ? '40000' : '60000';
      },
    };
    oracle.current = dated;
    const inv = await invoiceOf(a.api, customer.id, '40.00', '2027-01-01');
    const tx = (await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash(), timestamp: '2026-05-01T12:00:00.000Z' })).body;
    // No price at hand when recorded: the allocation asked for it.
    expect(tx.usd_value).toBeNull();
    expect(seen).toContain('BTC@2026-05-01T12:00:00.000Z');
    expect((await a.api.get(`/v1/crypto_transactions/${tx.id}`)).body.usd_value).toBe('40.00');
    expect((await a.api.get(`/v1/invoices/${inv.id}`)).body.status).toBe('paid');

    oracle.current = { usdPrice: async () => { throw new PriceUnavailableError('down'); } };
    const inv2 = await invoiceOf(a.api, customer.id, '40.00', '2027-01-02');
    const down = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.001', currency_code: 'BTC', transaction_id: txHash() });
    expect(down.status).toBe(201);
    expect((await a.api.get(`/v1/crypto_transactions/${down.body.id}`)).body).toMatchObject({ usd_value: null, allocations: [] });
    const manual = await a.api.post(`/v1/crypto_transactions/${down.body.id}/allocations`, { invoice_id: inv2.id });
    expect(manual.status).toBe(502);
    expect(manual.body.error).toMatchObject({ type: 'api_error', code: 'external_api_error' });
    oracle.current = new FixedRateOracle();
    // The retry (the workflow's job; called directly here) allocates it once the oracle is back.
    expect(await allocateTransaction(deps, down.body.id)).toMatchObject({ status: 'allocated', allocations: 1, unallocated: '10.00' });
    expect((await a.api.get(`/v1/invoices/${inv2.id}`)).body.status).toBe('paid');
    const again = await a.api.post(`/v1/crypto_transactions/${down.body.id}/allocations`, { invoice_id: inv2.id });
    expect([again.status, again.body.error.param]).toEqual([422, 'invoice_id']);
  });
});
