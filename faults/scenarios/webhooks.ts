/**
 * Scenario 2: `kill -9` the worker during a burst of events to 5 endpoints, one of which answers
 * 500 to the first attempt of every event. Three counts are compared: the writes the clients got
 * 201 for (one `customer.created` event each), the deliveries recorded (one per (event, endpoint),
 * `succeeded`, attempts 1..n without gap or repeat, the last one answered 2xx) and the requests the
 * endpoints received (each attempt logged with an answer was received with that answer; more
 * requests than attempts are resends of an attempt, at-least-once, counted in the details).
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
  /** The answer to each request of an event, in order. */
  received: Map<string, number[]>;
  https: HttpsReceiver;
}

async function startReceiver(ca: ReturnType<typeof receiverCa>, failFirstAttempt: boolean): Promise<Receiver> {
  const seen = new Set<string>();
  const r = { delivered: new Set<string>(), requests: 0, received: new Map() } as Receiver;
  r.https = await startHttpsReceiver(ca, (id) => {
    r.requests += 1;
    const status = failFirstAttempt && !seen.has(id) ? 500 : 200;
    seen.add(id);
    if (status === 200) r.delivered.add(id);
    r.received.set(id, [...(r.received.get(id) ?? []), status]);
    return status;
  });
  r.url = r.https.url;
  return r;
}

/** `restart: false` (the cluster scenario, two workers): the killed worker stays down; the other one delivers the rest. */
export async function webhooksUnderWorkerKill(ctx: ScenarioContext, opts: { events: number; endpoints?: number; restart?: boolean }): Promise<ScenarioResult> {
  const restart = opts.restart ?? true;
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
    const acknowledged: string[] = [];
    await pool(Array.from({ length: opts.events }, (_, i) => i), 8, async (i) => {
      const c = await client.post('/v1/customers', { email: `hook${i}@faults.example.com` });
      if (c.status !== 201) throw new Error(`customer: ${c.status} ${JSON.stringify(c.body)}`);
      acknowledged.push(c.body.id);
      created += 1;
      if (!killed && created >= opts.events / 3) {
        killed = (async () => {
          await app.worker.kill9();
          ctx.progress(`webhooks: worker killed after ${created} events${restart ? '' : `; ${app.workers.length - 1} other worker(s) left to deliver`}`);
          restartedAt = Date.now();
          if (!restart) return;
          await sleep(2_000);
          restartedAt = Date.now();
          await app.worker.start();
        })();
      }
    });
    await killed;

    // The writes acknowledged: one event each, counted from the 201s, not from the database.
    const stored = await Event.find({ account_id: app.accountId, event: 'customer.created' }, { _id: 1, 'payload.id': 1 }).lean<{ _id: string; payload: { id: string } }[]>();
    const eventsOf = new Map<string, string[]>();
    for (const e of stored) eventsOf.set(e.payload.id, [...(eventsOf.get(e.payload.id) ?? []), e._id]);
    const events = acknowledged.flatMap((id) => eventsOf.get(id) ?? []);
    const eventsLost = acknowledged.filter((id) => !eventsOf.has(id)).length;
    // Twice for one customer, or for a customer no client was answered for.
    const eventsDoubled = stored.length - acknowledged.filter((id) => eventsOf.has(id)).length;
    const missing = () => events.reduce((n, e) => n + receivers.filter((r) => !r.delivered.has(e)).length, 0);
    // The flaky endpoint's second attempt comes about 5 s after its first.
    await waitUntil(`every (event, endpoint) pair delivered`, () => missing() === 0, 300_000, 500);
    const recovered = seconds(restartedAt);
    // The record of a delivery is written after its answer.
    const records = () => WebhookDelivery.find({ account_id: app.accountId }).lean<WebhookDeliveryDoc[]>();
    await waitUntil('every delivery recorded as succeeded', async () => (await records()).filter((d) => d.status === 'succeeded').length >= events.length * count, 60_000, 500).catch(() => undefined);
    // Anything sent or recorded twice would show up shortly after.
    await sleep(2_000);

    const deliveries = await records();
    const byPair = new Map<string, WebhookDeliveryDoc[]>();
    for (const d of deliveries) byPair.set(`${d.event_id}|${d.endpoint_id}`, [...(byPair.get(`${d.event_id}|${d.endpoint_id}`) ?? []), d]);
    let gaps = 0;
    let repeated = 0;
    let unrecorded = 0;
    let notSucceeded = 0;
    let resent = 0;
    let phantom = 0;
    const logged = receivers.map(() => 0);
    const problems: string[] = [];
    for (const e of events) {
      receivers.forEach((r, k) => {
        const ds = byPair.get(`${e}|${endpointIds[k]}`) ?? [];
        if (!ds.length) {
          unrecorded += 1;
          return;
        }
        // A second record is counted as doubled below; the first one is compared here.
        const d = ds[0];
        const attempts = d.attempts ?? [];
        const numbers = attempts.map((a) => (a ? a.attempt : null));
        numbers.forEach((n, i) => {
          if (n === null) gaps += 1;
          else if (n !== i + 1) repeated += 1;
        });
        repeated += numbers.filter((n) => n !== null).length - new Set(numbers.filter((n) => n !== null)).size;
        const last = attempts[attempts.length - 1];
        if (d.status !== 'succeeded' || !last || last.status_code === null || last.status_code < 200 || last.status_code >= 300) {
          notSucceeded += 1;
          problems.push(`delivery ${d._id}: status ${d.status}, last attempt ${last ? `${last.attempt} answered ${last.status_code ?? last.error}` : 'none'}`);
        }
        // Requests received against attempts logged: each attempt logged with an answer was
        // received with that answer. More requests than attempts are resends of an attempt (an
        // activity retried after its worker died or its heartbeat lapsed, before it had logged):
        // at-least-once, counted, not failed; the last attempt and the status are checked above.
        const sent = attempts.filter((a): a is NonNullable<typeof a> => !!a && a.status_code !== null);
        logged[k] += sent.length;
        const answers = [...(r.received.get(e) ?? [])];
        resent += Math.max(0, answers.length - sent.length);
        for (const a of sent) {
          const i = answers.indexOf(a.status_code!);
          if (i >= 0) answers.splice(i, 1);
          else {
            phantom += 1;
            problems.push(`delivery ${d._id}: attempt ${a.attempt} logged with ${a.status_code}, no such request received (answers: ${(r.received.get(e) ?? []).join(', ') || 'none'})`);
          }
        }
      });
    }
    return {
      name: 'worker-kill-during-webhook-burst',
      operations: acknowledged.length * count,
      lost: eventsLost * count + missing() + unrecorded + gaps + notSucceeded,
      doubled: eventsDoubled + repeated + phantom + (deliveries.length - byPair.size),
      recoveredSeconds: recovered,
      details: [
        `${acknowledged.length} customers acknowledged (201) for ${opts.events} created, ${stored.length} customer.created events (${eventsLost} missing, ${eventsDoubled} extra)`,
        `${deliveries.length} delivery records (${unrecorded} pairs without one, ${notSucceeded} not succeeded with a 2xx last attempt), ${gaps} attempt gaps, ${repeated} repeated attempt numbers`,
        `requests received per endpoint: ${receivers.map((r) => r.requests).join(', ')}; attempts logged: ${logged.join(', ')} (${resent} resends of an attempt, ${phantom} attempts logged and not received; the first endpoint answers 500 to each event's first attempt)`,
        ...(restart ? [] : [`${app.apis.length} APIs, ${app.workers.length} workers; the killed worker stayed down (recovered: from the kill to the last delivery)`]),
        ...problems.slice(0, 10),
      ],
    };
  } finally {
    await Promise.all(receivers.map((r) => r.https.close()));
    await app.close();
  }
}
