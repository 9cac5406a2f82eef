import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';

export interface ReadinessProbe {
  name: string;
  check: () => Promise<void>;
}

/** /healthz: the process answers. /readyz: database and Temporal reachable. */
export function healthRoutes(router: Router<AppState>, probes: ReadinessProbe[]) {
  router.get('/healthz', (ctx: Ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx: Ctx) => {
    const results = await Promise.all(
      probes.map(async (p) => {
        try {
          await Promise.race([p.check(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000))]);
          return [p.name, 'ok'] as const;
        } catch (err) {
          return [p.name, `unavailable: ${(err as Error).message}`] as const;
        }
      }),
    );
    const ready = results.every(([, r]) => r === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) };
  });
}
