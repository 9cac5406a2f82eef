import type { Dependencies } from '../../dependencies';
import { onEventRecorded } from '../../services/events';
import { dispatchEvent, recipientsOf } from '../../services/webhookDispatch';
import { SweeperOptions, startSweeper } from '../../services/webhookSweeper';

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
  const unlisten = onEventRecorded({
    recipientsOf,
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
