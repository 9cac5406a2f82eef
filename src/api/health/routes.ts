import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { AppState, Ctx } from '../context';

export interface ReadinessProbe {
  name: string;
  check: () => Promise<void>;
}

const PROBE_TIMEOUT_MS = 2000;
/** How long one /readyz answer serves: a probe polling hard (or a flood) costs a ping per interval, not per request. */
export const READY_CACHE_MS = 1500;

/**
 * /healthz: the process answers. /readyz: database and Temporal reachable. Both are public, so
 * /readyz answers only `ok` or `unavailable`; what failed, and why, goes to the log. Its probes
 * run at most once per `cacheMs` (requests meanwhile, and those arriving while they run, share
 * the answer), so the public route cannot be used to hammer the database and Temporal.
 */
export function healthRoutes(router: Router<AppState>, probes: ReadinessProbe[], logger: Logger, cacheMs = READY_CACHE_MS) {
  router.get('/healthz', (ctx: Ctx) => {
    ctx.body = { status: 'ok' };
  });
  const probeAll = async (requestId: string | undefined): Promise<boolean> => {
    const results = await Promise.all(
      probes.map(async (p) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            p.check(),
            new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS))),
          ]);
          return true;
        } catch (err) {
          logger.warn({ probe: p.name, err, requestId }, 'readiness probe failed');
          return false;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return results.every(Boolean);
  };
  let last: { at: number; ready: Promise<boolean> } | null = null;
  const readiness = (requestId: string | undefined): Promise<boolean> => {
    if (last && Date.now() - last.at < cacheMs) return last.ready;
    const current = { at: Date.now(), ready: probeAll(requestId) };
    last = current;
    // Timed from the answer, so a slow probe does not leave a stale one cached for less than cacheMs.
    void current.ready.then(() => {
      current.at = Date.now();
    });
    return current.ready;
  };
  router.get('/readyz', async (ctx: Ctx) => {
    const ready = await readiness(ctx.state.requestId);
    ctx.status = ready ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: ready ? 'ok' : 'unavailable' };
  });
}
