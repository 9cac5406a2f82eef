/**
 * One writer at a time for documents several actors write (services/writes/heldWrites.ts), on the real
 * database. FerretDB v1 writes an update back as the whole document it read, so before the hold
 * an endpoint's auto-disable (the worker) landing with a secret rotation (the API) put the old
 * secret back in most rounds, after the API had answered with the new one.
 */
import { useTestDatabase } from '../../support/db';
import { RACE_ROUNDS, raceOffset } from '../../support/race';
import { newAccount, startTestApi, TestApi } from '../../support/api';
import { WebhookEndpoint, WebhookEndpointDoc } from '../../../src/models/webhookEndpoint';
import { WriteHold } from '../../../src/models/writeHold';
import { disableEndpoint } from '../../../src/services/webhooks/webhookDeliveries';
import { writeHeld } from '../../../src/services/writes/heldWrites';
import { createTokenFor } from '../../../src/services/accounts/accounts';
import { Account, AccountDoc } from '../../../src/models/account';
import { syncSubscriptionState } from '../../../src/services/billing/subscriptions';
import { Subscription, SubscriptionDoc } from '../../../src/models/subscription';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});


describe('held writes', () => {
  it('a secret rotation and an auto-disable at once: both land', async () => {
    const a = await newAccount(api.url);
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const endpoint = (await a.api.post('/v1/webhook_endpoints', { url: 'https://hooks.example.com/x', subscriptions: ['*'] })).body;
      const [rotated] = await Promise.all([
        a.api.post(`/v1/webhook_endpoints/${endpoint.id}/regenerate_secret`),
        raceOffset(round).then(() => disableEndpoint(null, endpoint.id, 'connection_error')),
      ]);
      expect(rotated.status).toBe(200);
      const stored = (await WebhookEndpoint.findById(endpoint.id).lean<WebhookEndpointDoc>())!;
      expect(stored.signing_secret).toBe(rotated.body.signing_secret);
      expect(stored).toMatchObject({ enabled: false, disabled_reason: 'connection_error', write_version: 2 });
    }
    expect(await WriteHold.countDocuments({ _id: { $regex: '^webhook_endpoints:' } })).toBe(0);
  });

  it("a subscription PATCH and its workflow's state write at once: both land", async () => {
    const a = await newAccount(api.url);
    const customer = (await a.api.post('/v1/customers', { email: 'held@x.io' })).body;
    const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
    const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 1000, recurring: { interval: 'month', interval_count: 1 } })).body;
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const sub = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: '2030-01-01', items: [{ price_id: price.id }] }] })).body;
      expect(sub.status).toBe('scheduled');
      const [patched, synced] = await Promise.all([
        a.api.patch(`/v1/subscriptions/${sub.id}`, { proration_behavior: 'none' }),
        raceOffset(round).then(() => syncSubscriptionState(sub.id, '2030-01-15T00:00:00.000Z')),
      ]);
      expect(patched.status).toBe(200);
      expect(synced).toBe('active');
      const stored = (await Subscription.findById(sub.id).lean<SubscriptionDoc>())!;
      expect(stored).toMatchObject({ proration_behavior: 'none', status: 'active', active_phase_index: 0, write_version: 2 });
    }
  });

  it('an account renamed through the API while the CLI adds a sandbox: both land', async () => {
    const a = await newAccount(api.url);
    for (let round = 0; round < RACE_ROUNDS; round++) {
      const [renamed] = await Promise.all([
        a.api.patch(`/v1/accounts/${a.account_id}`, { name: `Name ${round}` }),
        raceOffset(round).then(() => createTokenFor(a.account_id, `sandbox-${round}`)),
      ]);
      expect(renamed.status).toBe(200);
      const stored = (await Account.findById(a.account_id).lean<AccountDoc>())!;
      expect(stored.name).toBe(`Name ${round}`);
      expect(stored.sandboxes).toContain(`sandbox-${round}`);
    }
    expect((await Account.findById(a.account_id).lean<AccountDoc>())!.sandboxes).toHaveLength(RACE_ROUNDS + 1);
  });

  it('a whole `seen` is written from without a second read, and a stale one is read again', async () => {
    const a = await newAccount(api.url);
    const endpoint = (await a.api.post('/v1/webhook_endpoints', { url: 'https://hooks.example.com/z', subscriptions: ['*'] })).body;
    const seen = (await WebhookEndpoint.collection.findOne({ _id: endpoint.id } as never)) as WebhookEndpointDoc | null;
    const reads = jest.spyOn(WebhookEndpoint.collection, 'findOne');
    try {
      const fresh = await writeHeld<WebhookEndpointDoc>(WebhookEndpoint, endpoint.id, (doc) => ({ description: `${doc.description ?? ''}first` }), { seen, seenWhole: true });
      expect(fresh).toMatchObject({ result: 'written', after: { description: 'first', write_version: 1 } });
      expect(reads).not.toHaveBeenCalled();
      // `seen` is now a version behind: its write matches nothing, and the next try reads the document.
      const stale = await writeHeld<WebhookEndpointDoc>(WebhookEndpoint, endpoint.id, (doc) => ({ description: `${doc.description ?? ''}+second` }), { seen, seenWhole: true });
      expect(stale).toMatchObject({ result: 'written', before: { description: 'first' }, after: { description: 'first+second', write_version: 2 } });
      expect(reads).toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
    expect(await WriteHold.countDocuments({ _id: { $regex: `^webhook_endpoints:${endpoint.id}` } })).toBe(0);
  });

  it('a hold left by a writer that died is taken over once stale; a fresh one keeps others out', async () => {
    const a = await newAccount(api.url);
    const endpoint = (await a.api.post('/v1/webhook_endpoints', { url: 'https://hooks.example.com/y', subscriptions: ['*'] })).body;
    const holdId = `webhook_endpoints:${endpoint.id}#0`;
    await WriteHold.collection.insertOne({ _id: holdId, created_at: new Date() } as never);
    expect(await writeHeld(WebhookEndpoint, endpoint.id, () => ({ description: 'blocked' }), { tries: 2 })).toEqual({ result: 'busy' });
    await WriteHold.collection.updateOne({ _id: holdId } as never, { $set: { created_at: new Date(Date.now() - 61_000) } });
    const held = await writeHeld<WebhookEndpointDoc>(WebhookEndpoint, endpoint.id, () => ({ description: 'after the takeover' }));
    expect(held).toMatchObject({ result: 'written', after: { description: 'after the takeover', write_version: 1 } });
    expect(await WriteHold.countDocuments({ _id: holdId })).toBe(0);
  });
});
