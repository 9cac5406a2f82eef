import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { useTestDatabase } from '../support/db';
import { timeSkippingEnvironment } from '../support/temporal';
import { client, newAccount, startTestApi, TestApi } from '../support/api';
import { createTestWorker, fixtureHistory, recordHistory, replay } from '../support/workflows';
import { workflowIds } from '../../src/temporal/workflowIds';
import { BTC_BECH32, customerWithWallet, txHash } from '../crypto/helpers';

useTestDatabase();
const taskQueue = 'claim-link-test';
let env: TestWorkflowEnvironment;
let api: TestApi;

beforeAll(async () => {
  env = await timeSkippingEnvironment();
  api = await startTestApi({}, { CLAIM_VERIFICATION: 'false' }, { client: env.client, taskQueue });
});
afterAll(async () => {
  await api?.close();
  await env?.teardown();
});

async function setup(maxUses = 1) {
  const a = await newAccount(api.url);
  const { customer, wallet } = await customerWithWallet(a.api);
  await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 });
  const expiresAt = new Date(Math.max(Date.now(), await env.currentTimeMs()) + 2 * 3600_000).toISOString();
  const link = (await a.api.post('/v1/payment_claim_links', { customer_id: customer.id, max_uses: maxUses, expires_at: expiresAt })).body;
  return { a, link, handle: env.client.workflow.getHandle(workflowIds.claimLink(link.id)) };
}

describe('claim link workflow', () => {
  it('marks the link expired at expires_at, not before; the history replays', async () => {
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      const { a, link, handle } = await setup();
      await env.sleep('1 hour');
      expect((await a.api.get(`/v1/payment_claim_links/${link.id}`)).body.status).toBe('active');
      expect(await handle.result()).toBe('expired');
      const after = (await a.api.get(`/v1/payment_claim_links/${link.id}`)).body;
      expect(after).toMatchObject({ status: 'expired', expired: true, usable: false });
      const secret = link.link.split('/pay/')[1];
      const claim = await client(api.url).post(`/v1/public/payment_claim_links/${secret}/claims`, { transaction_id: txHash(), amount: '0.01', currency: 'BTC', to_address: BTC_BECH32 });
      expect(claim.status).toBe(422);
      expect(claim.body.error.code).toBe('parameter_invalid');
      await replay(recordHistory('claimLink-expires-current', await handle.fetchHistory()), 'replay-claim-link');
      await replay(fixtureHistory('claimLink-expires'), 'replay-claim-link-kept');
    });
  });

  it('ends when the link is used up or deleted', async () => {
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      const used = await setup(1);
      const secret = used.link.link.split('/pay/')[1];
      const claim = await client(api.url).post(`/v1/public/payment_claim_links/${secret}/claims`, { transaction_id: txHash(), amount: '0.01', currency: 'BTC', to_address: BTC_BECH32 });
      expect(claim.status).toBe(201);
      expect(await used.handle.result()).toBe('closed');
      expect((await used.a.api.get(`/v1/payment_claim_links/${used.link.id}`)).body.status).toBe('used');
      const deleted = await setup(1);
      await deleted.a.api.del(`/v1/payment_claim_links/${deleted.link.id}`);
      expect(await deleted.handle.result()).toBe('closed');
    });
  });
});
