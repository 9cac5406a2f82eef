import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { AppState, Ctx } from '../context';

export interface ReadinessProbe {
  name: string;
  check: () => Promise<void>;
}

const PROBE_TIMEOUT_MS = 2000;

/**
 * /healthz: the process answers. /readyz: database and Temporal reachable. Both are public, so
 * /readyz answers only `ok` or `unavailable`; what failed, and why, goes to the log.
 */
export function healthRoutes(router: Router<AppState>, probes: ReadinessProbe[], logger: Logger) {
  router.get('/healthz', (ctx: Ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx: Ctx) => {
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
          logger.warn({ probe: p.name, err, requestId: ctx.state.requestId }, 'readiness probe failed');
          return false;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const ready = results.every(Boolean);
    ctx.status = ready ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: ready ? 'ok' : 'unavailable' };
  });
}
