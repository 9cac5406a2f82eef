/**
 * A claim approved in the console with the API running its workflows (as in production): the
 * transaction is allocated by the allocation workflow on a worker and the invoice is paid, as
 * after an API approval. (test/console/claimActions.test.ts covers the rest, allocating inline.)
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { useTestDatabase } from '../support/db';
import { timeSkippingEnvironment } from '../support/temporal';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { createTestWorker } from '../support/workflows';
import { consoleBrowser } from '../support/consoleBrowser';
import { workflowIds } from '../../src/temporal/workflowIds';
import { Event } from '../../src/models/event';
import { PaymentClaim } from '../../src/models/paymentClaim';
import { newId, ID_PREFIX } from '../../src/lib/ids';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';

useTestDatabase();
const taskQueue = 'console-claim-actions-test';
let env: TestWorkflowEnvironment;
let api: TestApi;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
  api = await startTestApi({}, {}, { client: env.client, taskQueue });
});
afterAll(async () => {
  await api?.close();
  await env?.teardown();
});

describe('console approval with workflows', () => {
  it('the approved claim\'s transaction is allocated by the workflow and pays the invoice', async () => {
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      const a = await newAccount(api.url);
      const { customer, wallet } = await customerWithWallet(a.api);
      const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
      const invoice = await invoiceOf(a.api, customer.id, '100.00', '2027-01-01');
      // Stored as a submission stores it (the public flow is covered in claimActions.test.ts); approved through the console.
      const claim = await PaymentClaim.create({
        _id: newId(ID_PREFIX.paymentClaim), account_id: a.account_id, sandbox: null, status: 'pending', customer_id: customer.id, payment_claim_link_id: 'pcl_test',
        currency: 'BTC', amount: '0.002', transaction_id: txHash(), to_address_id: btc.id, to_address: btc.address,
      });
      const b = consoleBrowser(api.url);
      await b.signIn(a.email, a.password);
      const page = await b.go('GET', '/console/claims');
      const res = await b.go('POST', `/console/claims/${claim._id}/approval`, { csrf_token: b.csrfIn(page.text), confirm: 'yes', password: a.password });
      expect(res.status).toBe(303);
      const approved = (await a.api.get(`/v1/crypto_payment_claims/${claim._id}`)).body;
      expect(approved.status).toBe('approved');

      const handle = env.client.workflow.getHandle(workflowIds.allocation(customer.id));
      const deadline = Date.now() + 60_000;
      // The allocation writes the invoice, then the transaction's entries: wait for both.
      const settled = async () =>
        (await a.api.get(`/v1/invoices/${invoice.id}`)).body.status === 'paid' &&
        (await a.api.get(`/v1/crypto_transactions/${approved.crypto_transaction_id}`)).body.allocations?.length > 0;
      while (!(await settled())) {
        if (Date.now() > deadline) throw new Error('invoice still unpaid, or the transaction unallocated, after 60 s');
        await handle.result().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 500));
      }
      expect((await a.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', amount_paid: '100.00' });
      const tx = (await a.api.get(`/v1/crypto_transactions/${approved.crypto_transaction_id}`)).body;
      expect(tx).toMatchObject({ transaction_source: 'manual_entry', amount: '0.002', usd_value: '100.00' });
      expect(tx.allocations).toEqual([expect.objectContaining({ invoice_id: invoice.id, amount_applied: '100.00' })]);
      for (const name of ['payment_claim.approved', 'invoice.paid']) expect(await Event.countDocuments({ event: name, 'payload.id': name === 'invoice.paid' ? invoice.id : claim._id })).toBe(1);
    });
  });
});
