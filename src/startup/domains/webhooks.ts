import type { Dependencies } from '../../dependencies';
import { onEventRecorded } from '../../services/writes/events';
import { dispatchEvent, endpointsOf, recipientsAmong } from '../../services/webhooks/webhookDispatch';
import type { WebhookEndpointDoc } from '../../models/webhookEndpoint';
import { Coalescer } from '../../lib/coalesce';
import { scopeKey } from '../../models/scope';
import { SweeperOptions, startSweeper } from '../../services/webhooks/webhookSweeper';

const DEFAULTS: SweeperOptions = {
  // The listener normally dispatches within milliseconds; the sweeper is the safety net.
  intervalMs: 5_000,
  minAgeMs: 5_000,
  batch: 200,
  retentionSchedule: true,
};

/**
 * Start-up of the webhooks domain in a process that serves the API or runs the worker: the listener that starts deliveries as events are recorded, the sweeper
 * and the retention Schedule. Returns a stop function.
 */
export async function startWebhooksDomain(rt: Dependencies, opts: Partial<SweeperOptions> = {}): Promise<() => Promise<void>> {
  const temporal = rt.temporal;
  if (!temporal) return async () => undefined;
  // Concurrent events of one account and scope share one endpoints read, which starts after each
  // of them was recorded (so none misses an endpoint created before it): 1,000 renewals at one
  // instant record three events each, all in one account.
  const endpointReads = new Coalescer<WebhookEndpointDoc[]>();
  const unlisten = onEventRecorded({
    recipientsOf: async (event) =>
      recipientsAmong(await endpointReads.run(scopeKey(event), () => endpointsOf(event)), event),
    dispatch: async (event, recipients) => {
      // A few quick tries ride out a busy database; past that the sweeper takes over.
      for (let attempt = 1; ; attempt++) {
        try {
          await dispatchEvent(temporal, event, recipients ?? undefined);
          return;
        } catch (err) {
          if (attempt >= 3) {
            rt.logger.warn({ err, eventId: event.id }, 'webhook dispatch failed; the sweeper will retry');
            return;
          }
          await new Promise((r) => setTimeout(r, 100 * attempt));
        }
      }
    },
  });
  const stopSweeper = startSweeper(temporal, rt.logger, { ...DEFAULTS, ...opts });
  return async () => {
    unlisten();
    await stopSweeper();
  };
}
