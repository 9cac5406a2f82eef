/**
 * One wake-up of a subscription (services/billing/subscriptionWakeUps.ts) on the real database:
 * its events in one write ahead of the state write, and a worker that dies right after the state
 * write loses none of them on the retry (a retry finds the state already moved, so events written
 * after it would never be written).
 */
import { useTestDatabase } from '../../support/db';
import { newAccount, startTestApi, TestApi } from '../../support/api';
import { testDependencies } from '../../support/dependencies';
import { Event } from '../../../src/models/event';
import { Invoice } from '../../../src/models/invoice';
import { Subscription, SubscriptionDoc } from '../../../src/models/subscription';
import { toBillingPlan } from '../../../src/billing/subscriptionPlan';
import { ChargeInput, chargeInputOf, invoicedCharges } from '../../../src/billing/schedule';
import { wakeUpSubscription } from '../../../src/services/billing/subscriptionWakeUps';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const START = '2030-01-01T00:00:00.000Z';

/** The charges a subscription's workflow would pass at `now`, having looked last at `since`. */
function chargesDue(stored: SubscriptionDoc, now: string, since: string | null): ChargeInput[] {
  return invoicedCharges(toBillingPlan(stored), new Date(now), since ? new Date(since) : null).map(chargeInputOf);
}

/** A monthly subscription starting at START, and the charges its workflow would pass at START. */
async function scheduledSubscription() {
  const a = await newAccount(api.url);
  const customer = (await a.api.post('/v1/customers', { email: 'wake@x.io' })).body;
  const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
  const price = (await a.api.post('/v1/prices', { product_id: product.id, amount: 1000, recurring: { interval: 'month', interval_count: 1 } })).body;
  const sub = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: START, items: [{ price_id: price.id }] }] })).body;
  expect(sub.status).toBe('scheduled');
  const stored = (await Subscription.findById(sub.id).lean<SubscriptionDoc>())!;
  const charges = chargesDue(stored, START, null);
  expect(charges.map((c) => c.kind)).toEqual(['start']);
  return { id: sub.id as string, charges };
}

const eventsOf = async (subscriptionId: string) =>
  (await Event.find({ $or: [{ 'payload.subscription_id': subscriptionId }, { 'payload.id': subscriptionId }] }).sort({ timestamp: 1 }).lean()).map((e) => e.event);

describe('a subscription wake-up', () => {
  it("writes its invoice's and its state's events in one write, in order, ahead of the state", async () => {
    const { id, charges } = await scheduledSubscription();
    const before = await eventsOf(id);
    const inserts = jest.spyOn(Event.collection, 'insertMany');
    const stateWrites = jest.spyOn(Subscription.collection, 'findOneAndUpdate');
    try {
      expect(await wakeUpSubscription(testDependencies(), id, charges, START)).toEqual({ status: 'active', created: ['start'] });
      expect(inserts).toHaveBeenCalledTimes(1);
      expect((inserts.mock.calls[0][0] as { event: string }[]).map((e) => e.event)).toEqual(['invoice.created', 'subscription_phase.updated', 'subscription.activated']);
      expect(inserts.mock.invocationCallOrder[0]).toBeLessThan(stateWrites.mock.invocationCallOrder[0]);
    } finally {
      inserts.mockRestore();
      stateWrites.mockRestore();
    }
    expect((await eventsOf(id)).slice(before.length)).toEqual(['invoice.created', 'subscription_phase.updated', 'subscription.activated']);
    expect(await Subscription.findById(id).lean<SubscriptionDoc>()).toMatchObject({ status: 'active', active_phase_index: 0 });
  });

  it('an ordinary renewal writes its invoice and leaves the subscription as it was', async () => {
    const { id, charges } = await scheduledSubscription();
    const deps = testDependencies();
    await wakeUpSubscription(deps, id, charges, START);
    const active = (await Subscription.findById(id).lean<SubscriptionDoc>())!;
    const FEB = '2030-02-01T00:00:00.000Z';
    const renewal = chargesDue(active, FEB, START);
    expect(renewal.map((c) => c.kind)).toEqual(['renewal']);
    expect(await wakeUpSubscription(deps, id, renewal, FEB)).toEqual({ status: 'active', created: ['renewal'] });
    // No state write: the next billing date is computed when read, and nothing else moved.
    expect(await Subscription.findById(id).lean<SubscriptionDoc>()).toEqual(active);
    const periods = (await Invoice.find({ subscription_id: id }).lean()).map((i) => new Date(i.period_start!).toISOString()).sort();
    expect(periods).toEqual([START, FEB]);
  });

  it('a worker that dies right after the state write: the retry records nothing twice and loses nothing', async () => {
    const { id, charges } = await scheduledSubscription();
    const deps = testDependencies();
    const write = Subscription.collection.findOneAndUpdate.bind(Subscription.collection);
    const dies = jest.spyOn(Subscription.collection, 'findOneAndUpdate').mockImplementationOnce((async (...args: Parameters<typeof write>) => {
      await write(...args);
      throw new Error('the worker died after the state write');
    }) as never);
    try {
      await expect(wakeUpSubscription(deps, id, charges, START)).rejects.toThrow('the worker died');
    } finally {
      dies.mockRestore();
    }
    expect(await wakeUpSubscription(deps, id, charges, START)).toEqual({ status: 'active', created: [] });
    const events = await eventsOf(id);
    expect(events.filter((e) => e === 'subscription.activated')).toHaveLength(1);
    expect(events.filter((e) => e === 'subscription_phase.updated')).toHaveLength(1);
    const invoices = await Invoice.find({ subscription_id: id }).lean();
    expect(invoices).toHaveLength(1);
    expect(await Event.countDocuments({ event: 'invoice.created', 'payload.id': invoices[0]._id })).toBe(1);
  });
});
