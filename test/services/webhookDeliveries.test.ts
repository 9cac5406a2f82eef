/**
 * The reader of an attempt's endpoint and event (real database): concurrent attempts to one
 * endpoint share its read, and an attempt that begins after the endpoint changed sees the change.
 */
import { useTestDatabase } from '../support/db';
import { attemptTargetsReader } from '../../src/services/webhookDeliveries';
import { WebhookEndpoint } from '../../src/models/webhookEndpoint';
import { recordEvent } from '../../src/services/events';
import { newId, ID_PREFIX } from '../../src/lib/ids';

useTestDatabase();

async function newEndpoint(accountId: string) {
  const id = newId(ID_PREFIX.webhookEndpoint);
  await WebhookEndpoint.create({
    _id: id,
    account_id: accountId,
    sandbox: null,
    url: 'https://example.com/hook',
    subscriptions: ['*'],
    signing_secret: `whsec_${'ab'.repeat(32)}`,
  });
  return id;
}

/** Counts the reads of an endpoint by id while `fn` runs. */
async function endpointFinds(fn: () => Promise<unknown>): Promise<number> {
  const spy = jest.spyOn(WebhookEndpoint, 'findById');
  try {
    await fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('attemptTargetsReader', () => {
  it('gives concurrent attempts to one endpoint one read of it, and each its own event', async () => {
    const accountId = newId(ID_PREFIX.account);
    const endpointId = await newEndpoint(accountId);
    const events = await Promise.all(Array.from({ length: 20 }, (_, i) => recordEvent({ accountId, sandbox: null }, 'customer.created', { id: `cus_${i}`, object: 'customer' })));
    const read = attemptTargetsReader();
    let results: Awaited<ReturnType<typeof read>>[] = [];
    const finds = await endpointFinds(async () => {
      results = await Promise.all(events.map((e) => read(endpointId, e.id)));
    });
    // One read starts at once; the callers that arrive while it runs share the one queued behind it.
    expect(finds).toBeLessThanOrEqual(2);
    expect(results.map((r) => r.endpoint?._id)).toEqual(events.map(() => endpointId));
    expect(results.map((r) => r.event?._id)).toEqual(events.map((e) => e.id));
  });

  it('shows an attempt that begins after a change the endpoint as changed', async () => {
    const accountId = newId(ID_PREFIX.account);
    const endpointId = await newEndpoint(accountId);
    const event = await recordEvent({ accountId, sandbox: null }, 'customer.created', { id: 'cus_x', object: 'customer' });
    const read = attemptTargetsReader();
    expect((await read(endpointId, event.id)).endpoint).toMatchObject({ enabled: true });
    await WebhookEndpoint.updateOne({ _id: endpointId }, { $set: { enabled: false, signing_secret: `whsec_${'cd'.repeat(32)}` } });
    expect((await read(endpointId, event.id)).endpoint).toMatchObject({ enabled: false, signing_secret: `whsec_${'cd'.repeat(32)}` });
    await WebhookEndpoint.deleteOne({ _id: endpointId });
    expect((await read(endpointId, event.id)).endpoint).toBeNull();
  });
});
