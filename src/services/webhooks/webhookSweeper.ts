/**
 * The safety net of webhook dispatch (webhookDispatch.ts): a loop in every process that starts
 * the webhooks domain (API and worker) starts the deliveries of events still not `dispatched`,
 * and creates the retention Schedule once Temporal answers.
 */
import type { Logger } from 'pino';
import { runPeriodically } from '../../lib/periodic';
import { Event, EventDoc } from '../../models/event';
import type { WebhookEndpointDoc } from '../../models/webhookEndpoint';
import type { TemporalContext } from '../../temporal/context';
import { ensureRetentionSchedule } from '../../temporal/clients/webhookRetention';
import { DispatchableEvent, dispatchEvent, endpointsOf } from './webhookDispatch';

function fromDoc(e: EventDoc): DispatchableEvent {
  return { id: e._id, accountId: e.account_id, sandbox: e.sandbox ?? null, event: e.event, timestamp: new Date(e.timestamp) };
}

/**
 * One pass of the sweeper: events not dispatched and older than `minAgeMs` (younger ones are
 * the listener's), oldest first. Stops at the first failure (Temporal is probably down).
 */
export async function sweepUndispatchedEvents(temporal: TemporalContext, opts: { minAgeMs: number; batch: number }): Promise<number> {
  const cutoff = new Date(Date.now() - opts.minAgeMs);
  const events = await Event.find({ dispatched: false, timestamp: { $lte: cutoff } })
    .sort({ timestamp: 1 })
    .limit(opts.batch)
    .lean<EventDoc[]>();
  const endpointsByScope = new Map<string, Promise<WebhookEndpointDoc[]>>();
  let done = 0;
  for (const doc of events) {
    const ev = fromDoc(doc);
    const key = `${ev.accountId}/${ev.sandbox ?? ''}`;
    if (!endpointsByScope.has(key)) endpointsByScope.set(key, endpointsOf(ev));
    await dispatchEvent(temporal, ev, await endpointsByScope.get(key)!);
    done += 1;
  }
  return done;
}

/**
 * When the oldest event still waiting for its deliveries to start was written, or null. The
 * sweeper's query shape: the boolean equality is pushed down to FerretDB's index, then sorted.
 */
export async function oldestUndispatchedEventAt(): Promise<Date | null> {
  const oldest = await Event.findOne({ dispatched: false }, { timestamp: 1 }).sort({ timestamp: 1 }).lean<Pick<EventDoc, 'timestamp'>>();
  return oldest ? new Date(oldest.timestamp) : null;
}

export interface SweeperOptions {
  intervalMs: number;
  minAgeMs: number;
  batch: number;
  retentionSchedule: boolean;
}

/**
 * The sweeper loop, in every process that starts the webhooks domain (API and worker): any
 * number may run at once, starts are idempotent. It also creates the retention Schedule,
 * retrying until Temporal answers. Returns a stop function that waits for the current pass.
 */
export function startSweeper(temporal: TemporalContext, logger: Logger, opts: SweeperOptions): () => Promise<void> {
  let scheduleReady = !opts.retentionSchedule;
  return runPeriodically(async () => {
    if (!scheduleReady) {
      try {
        await ensureRetentionSchedule(temporal);
        scheduleReady = true;
      } catch (err) {
        logger.warn({ err }, 'webhook retention schedule not created yet');
      }
    }
    try {
      await sweepUndispatchedEvents(temporal, { minAgeMs: opts.minAgeMs, batch: opts.batch });
    } catch (err) {
      logger.warn({ err }, 'webhook sweeper pass failed; will retry');
    }
  }, opts.intervalMs);
}
