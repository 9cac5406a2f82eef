import { Context } from '@temporalio/activity';
import { HEARTBEAT_EVERY_MS } from '../temporal/activityOptions';

type AnyActivity = (...args: any[]) => Promise<unknown>;

/**
 * Heartbeats while the activity runs, so that when its worker dies Temporal retries it after
 * ACTIVITY_HEARTBEAT_TIMEOUT instead of waiting out its whole start-to-close timeout (up to
 * 5 minutes for allocation: the fault suite measured exactly that wait after a kill -9).
 */
export function heartbeating<F extends AnyActivity>(fn: F): F {
  return (async (...args: Parameters<F>) => {
    let ctx: Context | null = null;
    try {
      ctx = Context.current();
    } catch {
      // Called as a plain function (outside a worker): there is nothing to heartbeat to.
    }
    // A local activity has no heartbeat (its workflow task is kept alive by the SDK instead).
    if (ctx?.info.isLocal) ctx = null;
    const timer = ctx ? setInterval(() => ctx!.heartbeat(), HEARTBEAT_EVERY_MS) : null;
    try {
      return await fn(...args);
    } finally {
      if (timer) clearInterval(timer);
    }
  }) as F;
}

/** Every activity of an object, heartbeating. */
export function allHeartbeating<T extends Record<string, AnyActivity>>(activities: T): T {
  return Object.fromEntries(Object.entries(activities).map(([name, fn]) => [name, heartbeating(fn)])) as T;
}
