/**
 * The endpoint reader a worker's attempts share (real database): concurrent attempts to one
 * endpoint share its read, and an attempt that begins after the endpoint changed sees the change.
 */
import { useTestDatabase } from '../../support/db';
import { attemptTargets, deliveryStateAfter, recordAttempt, sharedEndpointReader } from '../../../src/services/webhooks/webhookDeliveries';
import { WebhookDelivery } from '../../../src/models/webhookDelivery';
import { WebhookEndpoint } from '../../../src/models/webhookEndpoint';
import { recordEvent } from '../../../src/services/writes/events';
import { newId, ID_PREFIX } from '../../../src/lib/ids';
import { callsDuring } from '../../support/spy';

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
const endpointFinds = (fn: () => Promise<unknown>) => callsDuring(WebhookEndpoint, 'findById', fn);

describe('attempts with the shared endpoint reader', () => {
  it('gives concurrent attempts to one endpoint one read of it, and each its own event', async () => {
    const accountId = newId(ID_PREFIX.account);
    const endpointId = await newEndpoint(accountId);
    const events = await Promise.all(Array.from({ length: 20 }, (_, i) => recordEvent({ accountId, sandbox: null }, 'customer.created', { id: `cus_${i}`, object: 'customer' })));
    const readEndpoint = sharedEndpointReader();
    let results: Awaited<ReturnType<typeof attemptTargets>>[] = [];
    const finds = await endpointFinds(async () => {
      results = await Promise.all(events.map((e) => attemptTargets(endpointId, e.id, readEndpoint)));
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
    const readEndpoint = sharedEndpointReader();
    const read = (endpoint: string, eventId: string) => attemptTargets(endpoint, eventId, readEndpoint);
    expect((await read(endpointId, event.id)).endpoint).toMatchObject({ enabled: true });
    await WebhookEndpoint.updateOne({ _id: endpointId }, { $set: { enabled: false, signing_secret: `whsec_${'cd'.repeat(32)}` } });
    expect((await read(endpointId, event.id)).endpoint).toMatchObject({ enabled: false, signing_secret: `whsec_${'cd'.repeat(32)}` });
    await WebhookEndpoint.deleteOne({ _id: endpointId });
    expect((await read(endpointId, event.id)).endpoint).toBeNull();
  });

  it('leaves no delivery record behind when the endpoint was deleted while the first attempt was in flight', async () => {
    const accountId = newId(ID_PREFIX.account);
    const endpointId = await newEndpoint(accountId);
    const ev = await recordEvent({ accountId, sandbox: null }, 'customer.created', { id: 'cus_y', object: 'customer' });
    const readEndpoint = sharedEndpointReader();
    const { endpoint, event } = await attemptTargets(endpointId, ev.id, readEndpoint);
    const now = new Date();
    const record = { attempt: 1, attempted_at: now, status_code: 200, error: null, error_detail: null, latency_ms: 5, response_body: 'ok' };
    const state = deliveryStateAfter({ result: 'succeeded', statusCode: 200 }, 1, null, now);
    // Kept: the endpoint still exists after the record was written.
    await recordAttempt({ deliveryId: `whd_kept_${ev.id}`, endpoint: endpoint!, event: event!, record, state, now, readEndpoint });
    expect(await WebhookDelivery.exists({ _id: `whd_kept_${ev.id}` })).toBeTruthy();
    // Deleted during the attempt: the record it wrote is taken back.
    await WebhookEndpoint.deleteOne({ _id: endpointId });
    await recordAttempt({ deliveryId: `whd_gone_${ev.id}`, endpoint: endpoint!, event: event!, record, state, now, readEndpoint });
    expect(await WebhookDelivery.exists({ _id: `whd_gone_${ev.id}` })).toBeNull();
  });
});
