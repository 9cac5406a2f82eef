/**
 * Scenario 2: `kill -9` the worker during a burst of events to 5 endpoints, one of which answers
 * 500 to the first attempt of every event. Every (event, endpoint) pair is delivered at least
 * once, and each delivery's attempt log has no gap and no attempt number twice.
 */
import { Event } from '../../src/models/event';
import { WebhookDelivery, WebhookDeliveryDoc } from '../../src/models/webhookDelivery';
import { pool } from '../client';
import { ScenarioContext, ScenarioResult, seconds, startScenarioApp } from '../scenario';
import { sleep, waitUntil } from '../stack';
import { receiverCa, startReceiver as startHttpsReceiver, Receiver as HttpsReceiver } from '../receiver';

interface Receiver {
  url: string;
  /** Event ids answered 2xx. */
  delivered: Set<string>;
  requests: number;
  https: HttpsReceiver;
}

async function startReceiver(ca: ReturnType<typeof receiverCa>, failFirstAttempt: boolean): Promise<Receiver> {
  const seen = new Set<string>();
  const r = { delivered: new Set<string>(), requests: 0 } as Receiver;
  r.https = await startHttpsReceiver(ca, (id) => {
    r.requests += 1;
    if (failFirstAttempt && !seen.has(id)) {
      seen.add(id);
      return 500;
    }
    r.delivered.add(id);
    return 200;
  });
  r.url = r.https.url;
  return r;
}

export async function webhooksUnderWorkerKill(ctx: ScenarioContext, opts: { events: number; endpoints?: number }): Promise<ScenarioResult> {
  const ca = receiverCa(ctx.runDir);
  const app = await startScenarioApp(ctx, 'webhooks', ca.env);
  const receivers: Receiver[] = [];
  try {
    const { client } = app;
    const count = opts.endpoints ?? 5;
    for (let i = 0; i < count; i++) receivers.push(await startReceiver(ca, i === 0));
    const endpointIds: string[] = [];
    for (const r of receivers) {
      const e = await client.post('/v1/webhook_endpoints', { url: r.url, subscriptions: ['customer.created'] });
      if (e.status !== 201) throw new Error(`endpoint: ${e.status} ${JSON.stringify(e.body)}`);
      endpointIds.push(e.body.id);
    }

    ctx.progress(`webhooks: ${opts.events} events to ${count} endpoints; the worker is killed a third of the way in`);
    let created = 0;
    let killed: Promise<void> | null = null;
    let restartedAt = 0;
    await pool(Array.from({ length: opts.events }, (_, i) => i), 8, async (i) => {
      const c = await client.post('/v1/customers', { email: `hook${i}@faults.example.com` });
      if (c.status !== 201) throw new Error(`customer: ${c.status} ${JSON.stringify(c.body)}`);
      created += 1;
      if (!killed && created >= opts.events / 3) {
        killed = (async () => {
          await app.worker.kill9();
          ctx.progress(`webhooks: worker killed after ${created} events`);
          await sleep(2_000);
          restartedAt = Date.now();
          await app.worker.start();
        })();
      }
    });
    await killed;

    const events = await Event.find({ account_id: app.accountId, event: 'customer.created' }, { _id: 1 }).lean<{ _id: string }[]>();
    const missing = () => events.reduce((n, e) => n + receivers.filter((r) => !r.delivered.has(e._id)).length, 0);
    // The flaky endpoint's second attempt comes about 5 s after its first.
    await waitUntil(`every (event, endpoint) pair delivered`, () => missing() === 0, 300_000, 500);
    const recovered = seconds(restartedAt);
    await sleep(2_000);

    const deliveries = await WebhookDelivery.find({ account_id: app.accountId }).lean<WebhookDeliveryDoc[]>();
    let gaps = 0;
    let repeated = 0;
    for (const d of deliveries) {
      const numbers = (d.attempts ?? []).map((a) => (a ? a.attempt : null));
      numbers.forEach((n, i) => {
        if (n === null) gaps += 1;
        else if (n !== i + 1) repeated += 1;
      });
      const seen = new Set(numbers.filter((n) => n !== null));
      repeated += numbers.filter((n) => n !== null).length - seen.size;
    }
    const pairs = new Set(deliveries.map((d) => `${d.event_id}|${d.endpoint_id}`));
    return {
      name: 'worker-kill-during-webhook-burst',
      operations: events.length * count,
      lost: missing() + gaps + (events.length * count - pairs.size),
      doubled: repeated + (deliveries.length - pairs.size),
      recoveredSeconds: recovered,
      details: [
        `${events.length} events (${opts.events} customers created), ${deliveries.length} delivery records, ${gaps} attempt gaps, ${repeated} repeated attempt numbers`,
        `requests received per endpoint: ${receivers.map((r) => r.requests).join(', ')} (the first answers 500 to each event's first attempt)`,
      ],
    };
  } finally {
    await Promise.all(receivers.map((r) => r.https.close()));
    await app.close();
  }
}
