/**
 * An invoice's writers at the same instant (real database): a crypto allocation against a PATCH,
 * the overdue marking and a price's line items going. FerretDB v1 writes an update back as the
 * whole document it read, so without the held slot (services/billing/invoiceWrites.ts) one of each
 * pair was undone in most rounds: a void wiped the payment's amount_paid, or the payment put a
 * voided invoice back to pending.
 */
import { useTestDatabase } from '../../support/db';
import { RACE_ROUNDS, raceOffset } from '../../support/race';
import { newAccount, startTestApi, TestApi } from '../../support/api';
import { testDependencies } from '../../support/dependencies';
import { customerWithWallet, invoiceOf } from '../../crypto/helpers';
import { Invoice, InvoiceDoc } from '../../../src/models/invoice';
import { AllocationSlot } from '../../../src/models/cryptoTransaction';
import { applyCryptoAllocation, cryptoAllocationsOf } from '../../../src/services/billing/invoiceWrites';
import { markInvoiceOverdue, updateInvoice } from '../../../src/services/billing/invoiceChanges';
import { ApiError } from '../../../src/lib/errors';
import { sumAmounts } from '../../../src/billing/money';
import { randomHex } from '../../../src/lib/ids';

useTestDatabase();
let api: TestApi;
const deps = testDependencies();
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});


/** The allocation of 40.00 to the invoice as planned from a pending, unpaid read. */
function allocate(invoiceId: string) {
  const entry = { id: `alloc_${randomHex(8)}`, transaction_id: `trxn_${randomHex(8)}`, amount_applied: '40.00', pays_in_full: false, created_at: new Date() };
  return applyCryptoAllocation(deps, invoiceId, entry, { amount_paid: '0.00', status: 'pending' }).then((r) => ({ ...r, entry }));
}

/** Retries a conflict as the allocation workflow does (it plans again from a fresh read, after a short pause). */
async function allocateUntilSettled(invoiceId: string) {
  for (let attempt = 0; attempt < 20; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 10 * attempt));
    const r = await allocate(invoiceId);
    if (r.result !== 'conflict') return r;
    const now = await Invoice.findById(invoiceId).lean<InvoiceDoc>();
    if (now?.status !== 'pending' || (now.amount_paid ?? '0.00') !== '0.00') return r;
  }
  throw new Error('allocation kept conflicting');
}

/** A new account with a customer, and the account's production scope. */
async function payingCustomer() {
  const a = await newAccount(api.url);
  const { customer } = await customerWithWallet(a.api);
  return { a, customer, scope: { accountId: a.account_id as string, sandbox: null } };
}

/** What every invoice must keep: amount_paid is the sum of its allocations, and no slot is left held. */
async function expectConsistent(invoiceId: string): Promise<InvoiceDoc> {
  const inv = (await Invoice.findById(invoiceId).lean<InvoiceDoc>())!;
  const entries = cryptoAllocationsOf(inv);
  expect(inv.amount_paid ?? '0.00').toBe(sumAmounts(['0.00', ...entries.map((e) => e.amount_applied)]));
  expect(await AllocationSlot.countDocuments({ _id: `${invoiceId}#${entries.length}` })).toBe(0);
  return inv;
}

describe('an invoice written by an allocation and a change at once', () => {
  it('a PATCH to canceled and an allocation: both land, or the allocation is refused; never one undoing the other', async () => {
    const { a, customer, scope } = await payingCustomer();
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2030-01-01');
      const [patch, alloc] = await Promise.all([
        updateInvoice(deps, scope, invoice.id, { status: 'canceled' }).catch((err) => err),
        raceOffset(round).then(() => allocateUntilSettled(invoice.id)),
      ]);
      const inv = await expectConsistent(invoice.id);
      const entries = cryptoAllocationsOf(inv);
      if (patch instanceof ApiError) {
        // Refused while the allocation held the invoice: the payment stands, nothing was canceled.
        expect(patch.code).toBe('invoice_changed');
        expect(inv.status).toBe('pending');
      } else {
        if (patch instanceof Error) throw patch;
        // The void answered 200: the invoice stays canceled, whatever the allocation did.
        expect(inv.status).toBe('canceled');
      }
      // Applied: on the invoice (and paid for); refused: not on it.
      expect(entries.map((e) => e.id)).toEqual(alloc.result === 'applied' ? [alloc.entry.id] : []);
    }
  });

  it('a due-date PATCH and an allocation: both always land', async () => {
    const { a, customer, scope } = await payingCustomer();
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2030-01-01');
      const [patch, alloc] = await Promise.all([updateInvoice(deps, scope, invoice.id, { due_date: '2031-06-30' }), raceOffset(round).then(() => allocateUntilSettled(invoice.id))]);
      expect(patch.due_date).toBe('2031-06-30');
      expect(alloc.result).toBe('applied');
      const inv = await expectConsistent(invoice.id);
      expect(inv).toMatchObject({ due_date: '2031-06-30', status: 'pending', amount_paid: '40.00' });
      expect(cryptoAllocationsOf(inv).map((e) => e.id)).toEqual([alloc.entry.id]);
    }
  });

  it('the overdue marking and an allocation: both always land', async () => {
    const { a, customer } = await payingCustomer();
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2030-01-01');
      const [overdue, alloc] = await Promise.all([
        markInvoiceOverdue(deps, invoice.id, '2030-01-01'),
        // Planned from pending or from overdue, whichever it read: a conflict re-plans.
        (async () => {
          await raceOffset(round);
          for (let attempt = 0; ; attempt++) {
            if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 10 * Math.min(attempt, 20)));
            const now = (await Invoice.findById(invoice.id).lean<InvoiceDoc>())!;
            const entry = { id: `alloc_${randomHex(8)}`, transaction_id: `trxn_${randomHex(8)}`, amount_applied: '40.00', pays_in_full: false, created_at: new Date() };
            const r = await applyCryptoAllocation(deps, invoice.id, entry, { amount_paid: now.amount_paid ?? '0.00', status: now.status });
            if (r.result !== 'conflict') return { ...r, entry };
          }
        })(),
      ]);
      expect(overdue).toBe('marked');
      expect(alloc.result).toBe('applied');
      const inv = await expectConsistent(invoice.id);
      expect(inv).toMatchObject({ status: 'overdue', amount_paid: '40.00' });
    }
  });
});
