import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { useTestDatabase } from '../support/db';
import { timeSkippingEnvironment } from '../support/temporal';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { createTestWorker, fixtureHistory, recordHistory, replay } from '../support/workflows';
import { workflowIds } from '../../src/temporal/workflowIds';
import { scheduleQuery } from '../../src/temporal/subscriptionDefinitions';
import { Event } from '../../src/models/event';
import { Invoice } from '../../src/models/invoice';
import type { TemporalContext } from '../../src/temporal/context';

useTestDatabase();
let env: TestWorkflowEnvironment;
let api: TestApi;
let taskQueue = '';
let queues = 0;
/** The API's Temporal client; its task queue changes per test. */
let temporal: TemporalContext;

// A task queue per test: workflows left running by one test never land on the next test's worker.
beforeEach(() => {
  taskQueue = `subscription-test-${++queues}`;
  temporal.taskQueue = taskQueue;
});

// Workflows left running with pending timers and no worker would hold the test server's clock.
afterEach(async () => {
  const { Subscription } = await import('../../src/models/subscription');
  const ids = [
    ...(await Subscription.find({}, { _id: 1 }).lean()).map((s) => workflowIds.subscription(String(s._id))),
    ...(await Invoice.find({}, { _id: 1 }).lean()).map((i) => workflowIds.invoiceDue(String(i._id))),
  ];
  await Promise.all(ids.map((id) => env.client.workflow.getHandle(id).terminate('test cleanup').catch(() => undefined)));
});

beforeAll(async () => {
  env = await timeSkippingEnvironment();
  temporal = { client: env.client, taskQueue: 'unused' };
  api = await startTestApi({}, {}, temporal);
});
afterAll(async () => {
  await api?.close();
  await env?.teardown();
});

/** The first year after the test server's clock with no Feb 29 (expected amounts assume 365 days). */
async function nextCommonYear(): Promise<number> {
  let y = new Date(await env.currentTimeMs()).getUTCFullYear() + 1;
  while (new Date(Date.UTC(y, 1, 29)).getUTCMonth() === 1) y += 1;
  return y;
}

/** Skips test-server time forward to an instant. */
async function skipTo(iso: string) {
  const ms = new Date(iso).getTime() - (await env.currentTimeMs());
  if (ms > 0) await env.sleep(ms);
}

async function customerWithPrices() {
  const a = await newAccount(api.url);
  const customer = (await a.api.post('/v1/customers', { email: 'wf@x.io' })).body;
  const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
  const price = async (amount: number, interval: string) =>
    (await a.api.post('/v1/prices', { product_id: product.id, amount, recurring: { interval, interval_count: 1 } })).body;
  return { a, customer, trial: await price(0, 'month'), monthly: await price(1000, 'month'), yearly: await price(10000, 'year'), monthly25: await price(2500, 'month') };
}

async function invoicesOf(subscriptionId: string) {
  const list = await Invoice.find({ subscription_id: subscriptionId }).lean();
  return list
    .map((i) => [new Date(i.period_start!).toISOString().slice(0, 10), i.total_amount, i.due_date] as const)
    .sort((x, y) => x[0].localeCompare(y[0]));
}

describe('subscription workflow (time skipping)', () => {
  it('bills a monthly subscription started on Jan 31 exactly 13 times in 13 months, on the clamped dates', async () => {
    const { a, customer, monthly25 } = await customerWithPrices();
    const Y = await nextCommonYear();
    const N = Y + 1;
    const febEnd = new Date(Date.UTC(N, 2, 0)).getUTCDate();
    const sub = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: `${Y}-01-31T00:00:00Z`, items: [{ price_id: monthly25.id }] }] })).body;
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      await skipTo(`${N}-02-15T00:00:00Z`);
      const handle = env.client.workflow.getHandle(workflowIds.subscription(sub.id));
      const view = await handle.query(scheduleQuery);
      expect(view.status).toBe('active');
      expect(view.upcoming[0]).toEqual({ at: `${N}-02-${febEnd}T00:00:00.000Z`, kind: 'renewal', total: '25.00' });
      const history = await handle.fetchHistory();
      // Renewals run as local activities (markers), never as activity tasks.
      expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
      expect(history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length).toBeGreaterThan(13);
      // One local activity per wake-up (invoices, then state), not one per charge plus one for the state.
      const markers = history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
      const timers = history.events!.filter((e) => e.timerFiredEventAttributes);
      expect(markers).toHaveLength(1 + 1 + timers.length); // the plan's load, the start, one per timer that fired
      await replay(recordHistory('subscription-monthly-current', history), 'replay-subscription');
      // Kept (read-only) from runs with one local activity per wake-up: such runs must still replay.
      await replay(fixtureHistory('subscription-monthly-one-activity'), 'replay-subscription-one-activity');
      // Kept from before a wake-up was one local activity: such runs must still replay.
      await replay(fixtureHistory('subscription-monthly-local-activities'), 'replay-subscription-two-activities');
      // Kept from before renewals were local activities: such runs must still replay.
      await replay(fixtureHistory('subscription-monthly'), 'replay-subscription-activities');
    });
    const invoices = await invoicesOf(sub.id);
    expect(invoices.map(([d]) => d)).toEqual([
      ...['01-31', '02-28', '03-31', '04-30', '05-31', '06-30', '07-31', '08-31', '09-30', '10-31', '11-30', '12-31'].map((md) => `${Y}-${md}`),
      `${N}-01-31`,
    ]);
    expect(invoices.every(([, total]) => total === '25.00')).toBe(true);
    expect(invoices[1][2]).toBe(`${Y}-03-07`); // due 7 days after the billing date
    expect(await Event.countDocuments({ event: 'subscription.renewed', 'payload.id': sub.id })).toBe(12);
    expect(await Event.countDocuments({ event: 'subscription.activated', 'payload.id': sub.id })).toBe(1);
    const got = (await a.api.get(`/v1/subscriptions/${sub.id}`)).body;
    // Status is the workflow's (stored at the phase's start, on the skipped clock); the next billing
    // date is computed when read, on the API's real clock, for which the start (next year) is ahead.
    expect(got).toMatchObject({ status: 'active', next_billing_date: `${Y}-01-31T00:00:00.000Z` });
    expect(got.phases[0].is_active).toBe(true);
  });

  // Month-day of each invoice; 'next' marks Jan 1 of the following year.
  const expected: Record<string, Array<[string, string]>> = {
    create_prorations: [['01-15', '5.48'], ['02-01', '10.00'], ['03-01', '10.00'], ['03-15', '74.52'], ['next', '100.00']],
    always_invoice: [['01-15', '10.00'], ['02-15', '10.00'], ['03-15', '100.00']],
    none: [['02-01', '10.00'], ['03-01', '10.00'], ['next', '100.00']],
  };

  for (const behavior of Object.keys(expected)) {
    it(`bills a trial, then $10 monthly x 2, then $100 yearly under ${behavior}, with the phase events`, async () => {
      const { a, customer, trial, monthly, yearly } = await customerWithPrices();
      const Y = await nextCommonYear();
      const sub = (
        await a.api.post('/v1/subscriptions', {
          customer_id: customer.id,
          proration_behavior: behavior,
          phases: [
            { start_date: `${Y}-01-01`, end_date: `${Y}-01-15`, items: [{ price_id: trial.id }] },
            { start_date: `${Y}-01-15`, end_date: `${Y}-03-15`, items: [{ price_id: monthly.id }] },
            { start_date: `${Y}-03-15`, items: [{ price_id: yearly.id }] },
          ],
        })
      ).body;
      const worker = await createTestWorker(env, taskQueue);
      await worker.runUntil(() => skipTo(`${Y + 1}-01-02T00:00:00Z`));
      const dated = expected[behavior].map(([md, t]) => [md === 'next' ? `${Y + 1}-01-01` : `${Y}-${md}`, t]);
      expect((await invoicesOf(sub.id)).map(([d, t]) => [d, t])).toEqual(dated);
      const phaseSteps = (await a.api.get(`/v1/subscriptions/${sub.id}/timeline`)).body.timeline
        .filter((s: any) => s.step.startsWith('phase_started') || s.step.startsWith('phase_ended') || s.step === 'activated')
        .map((s: any) => [s.step, s.start_date ?? null]);
      expect(phaseSteps).toEqual([
        ['phase_started', `${Y}-01-01T00:00:00.000Z`],
        ['activated', null],
        ['phase_ended', `${Y}-01-01T00:00:00.000Z`],
        ['phase_started', `${Y}-01-15T00:00:00.000Z`],
        ['phase_ended', `${Y}-01-15T00:00:00.000Z`],
        ['phase_started', `${Y}-03-15T00:00:00.000Z`],
      ]);
      const timeline = (await a.api.get(`/v1/subscriptions/${sub.id}/timeline`)).body.timeline;
      expect(timeline[0].step).toBe('created');
      expect(timeline.filter((s: any) => s.step === 'invoice_generated').map((s: any) => s.amount)).toEqual(expected[behavior].map(([, t]) => t));
      const got = (await a.api.get(`/v1/subscriptions/${sub.id}`)).body;
      expect(got.phases.map((p: any) => p.is_active)).toEqual([false, false, true]);
      expect(got.total_amount).toBe('100.00');
    });
  }

  it('bills nothing after a cancellation mid-cycle', async () => {
    const { a, customer, monthly } = await customerWithPrices();
    const Y = await nextCommonYear();
    const sub = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: `${Y}-01-01`, items: [{ price_id: monthly.id }] }] })).body;
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      await skipTo(`${Y}-02-10T00:00:00Z`);
      expect((await a.api.del(`/v1/subscriptions/${sub.id}`)).status).toBe(204);
      expect(await env.client.workflow.getHandle(workflowIds.subscription(sub.id)).result()).toBe('canceled');
      await skipTo(`${Y}-06-01T00:00:00Z`);
    });
    expect((await invoicesOf(sub.id)).map(([d]) => d)).toEqual([`${Y}-01-01`, `${Y}-02-01`]);
    expect(await Event.countDocuments({ event: 'subscription.canceled', 'payload.id': sub.id })).toBe(1);
  });

  // Durability: a workflow that wakes late (worker down, server restarted) bills every period
  // due since it last ran, each once. The time-skipping server holds its clock while a
  // workflow task waits for a worker, so the late wake-up is shown with a start in the past.
  it('bills every period since a start date in the past on its first run, each once', async () => {
    const { a, customer, monthly } = await customerWithPrices();
    const now = new Date(await env.currentTimeMs());
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 3, 1));
    const sub = (await a.api.post('/v1/subscriptions', { customer_id: customer.id, phases: [{ start_date: start.toISOString().slice(0, 10), items: [{ price_id: monthly.id }] }] })).body;
    const worker = await createTestWorker(env, taskQueue);
    await worker.runUntil(async () => {
      for (let i = 0; i < 100 && (await invoicesOf(sub.id)).length < 4; i++) await env.sleep('1 minute');
    });
    const months = [0, 1, 2, 3].map((m) => new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m, 1)).toISOString().slice(0, 10));
    expect((await invoicesOf(sub.id)).map(([d]) => d)).toEqual(months);
    expect(await Event.countDocuments({ event: 'invoice.created', 'payload.subscription_id': sub.id })).toBe(4);
    expect(await Event.countDocuments({ event: 'subscription.renewed', 'payload.id': sub.id })).toBe(3);
  });
});
