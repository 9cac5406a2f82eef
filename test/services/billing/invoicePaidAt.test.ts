/**
 * Invoices paid before `paid_at` existed (real database): the worker's start-up backfill writes it once,
 * from the allocation that paid the invoice or its last update, and a payment claim link's view
 * then lists them among what was paid since the link.
 */
import { useTestDatabase } from '../../support/db';
import { client, newAccount, startTestApi, TestApi } from '../../support/api';
import { testDependencies } from '../../support/dependencies';
import { BTC_BECH32, customerWithWallet, invoiceOf } from '../../crypto/helpers';
import { Invoice, InvoiceDoc, paidMarks, paidMonthKey } from '../../../src/models/invoice';
import { PaymentClaimLink } from '../../../src/models/paymentClaimLink';
import { Migration } from '../../../src/models/migration';
import { Event } from '../../../src/models/event';
import { backfillInvoicePaidAt, PAID_AT_MIGRATION } from '../../../src/services/billing/invoicePaidAt';

useTestDatabase();
let api: TestApi;
const deps = testDependencies();
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const DAY = 86_400_000;
const read = async (id: string) => (await Invoice.findById(id).lean<InvoiceDoc>())!;

/** Paid the way invoices were before 2026-11-28: status and amounts, no `paid_at`, no month key. */
async function paidBeforePaidAt(id: string, fields: Record<string, unknown>) {
  await Invoice.collection.updateOne({ _id: id } as never, { $set: { status: 'paid', ...fields }, $unset: { paid_at: '', paid_month_key: '' } });
}

it('writes paid_at and its month key once on the paid invoices that lack them, and the claim link lists them', async () => {
  const a = await newAccount(api.url);
  const { customer, wallet } = await customerWithWallet(a.api);
  await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
  const now = Date.now();
  const byCrypto = await invoiceOf(a.api, customer.id, '30.00', '2027-01-01');
  const byHand = await invoiceOf(a.api, customer.id, '20.00', '2027-01-02');
  const longAgo = await invoiceOf(a.api, customer.id, '10.00', '2027-01-03');
  const open = await invoiceOf(a.api, customer.id, '5.00', '2027-01-04');
  const alreadyMarked = await invoiceOf(a.api, customer.id, '7.00', '2027-01-05');
  const changedAfter = await invoiceOf(a.api, customer.id, '9.00', '2027-01-06');

  const paidInFullAt = new Date(now - 10 * DAY);
  const updatedAt = new Date(now - 2 * DAY);
  await paidBeforePaidAt(byCrypto.id, {
    amount_paid: '30.00',
    updated_at: updatedAt,
    crypto_allocations: [
      { id: 'alloc_a', transaction_id: 'trxn_a', amount_applied: '10.00', pays_in_full: false, created_at: new Date(now - 12 * DAY) },
      { id: 'alloc_b', transaction_id: 'trxn_b', amount_applied: '20.00', pays_in_full: true, created_at: paidInFullAt },
    ],
  });
  const markedByHandAt = new Date(now - 5 * DAY);
  await paidBeforePaidAt(byHand.id, { updated_at: markedByHandAt });
  await paidBeforePaidAt(longAgo.id, { updated_at: new Date(now - 60 * DAY) });
  // Marked paid by hand through the API (its invoice.paid event written), then changed a week later.
  expect((await a.api.patch(`/v1/invoices/${changedAfter.id}`, { status: 'paid' })).status).toBe(200);
  const paidByHandAt = new Date(now - 20 * DAY);
  await Event.collection.updateMany({ 'payload.id': changedAfter.id, event: 'invoice.paid' } as never, { $set: { timestamp: paidByHandAt } });
  expect(await Event.countDocuments({ 'payload.id': changedAfter.id, event: 'invoice.paid' })).toBe(1);
  await paidBeforePaidAt(changedAfter.id, { updated_at: new Date(now - 13 * DAY) });
  const markedAt = new Date(now - DAY);
  await Invoice.collection.updateOne({ _id: alreadyMarked.id } as never, { $set: { status: 'paid', ...paidMarks(customer.id, markedAt) } });

  // A link made 40 days ago: before the backfill, the invoices paid since without `paid_at` are missing.
  const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, expires_at: new Date(now + DAY).toISOString() })).body;
  await PaymentClaimLink.collection.updateOne({ _id: link.id } as never, { $set: { created_at: new Date(now - 40 * DAY) } });
  const listed = async () =>
    ((await client(api.url).get(`/v1/public/payment_claim_links/${link.link.split('/pay/')[1]}`)).body.invoices as { id: string; status: string }[]).map((i) => `${i.id}:${i.status}`).sort();
  expect(await listed()).toEqual([`${open.id}:pending`, `${alreadyMarked.id}:paid`].sort());

  // A run cut short (the worker stopping) writes nothing more and is not recorded: the next start finishes it.
  const stopped = new AbortController();
  stopped.abort();
  expect(await backfillInvoicePaidAt(deps, stopped.signal)).toBe(0);
  expect(await Migration.findById(PAID_AT_MIGRATION).lean()).toBeNull();
  expect((await read(byHand.id)).paid_at).toBeUndefined();

  expect(await backfillInvoicePaidAt(deps)).toBe(4);

  const crypto = await read(byCrypto.id);
  expect(new Date(crypto.paid_at!).toISOString()).toBe(paidInFullAt.toISOString());
  expect(crypto.paid_month_key).toBe(paidMonthKey(customer.id, paidInFullAt));
  // Nothing about the invoice changed: its last update stays.
  expect(new Date(crypto.updated_at).toISOString()).toBe(updatedAt.toISOString());
  expect(crypto.amount_paid).toBe('30.00');
  const hand = await read(byHand.id);
  expect(new Date(hand.paid_at!).toISOString()).toBe(markedByHandAt.toISOString());
  expect(hand.paid_month_key).toBe(paidMonthKey(customer.id, markedByHandAt));
  expect((await read(open.id)).paid_at).toBeUndefined();
  // Its last update (13 days ago) is not when it was paid (20 days ago): the event is.
  const changed = await read(changedAfter.id);
  expect(new Date(changed.paid_at!).toISOString()).toBe(paidByHandAt.toISOString());
  expect(changed.paid_month_key).toBe(paidMonthKey(customer.id, paidByHandAt));
  expect(new Date((await read(alreadyMarked.id)).paid_at!).toISOString()).toBe(markedAt.toISOString());

  // Paid since the link (10 and 5 days ago) listed; paid 60 days ago, before the link, not.
  expect(await listed()).toEqual([`${open.id}:pending`, `${alreadyMarked.id}:paid`, `${byCrypto.id}:paid`, `${byHand.id}:paid`, `${changedAfter.id}:paid`].sort());

  // Done once: recorded, and a later start reads nothing more (an invoice stripped again stays as it is).
  expect(await Migration.findById(PAID_AT_MIGRATION).lean()).toMatchObject({ changed: 4 });
  await paidBeforePaidAt(byHand.id, {});
  expect(await backfillInvoicePaidAt(deps)).toBe(0);
  expect((await read(byHand.id)).paid_at).toBeUndefined();
});
