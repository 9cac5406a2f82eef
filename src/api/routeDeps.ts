/**
 * The types route modules are built with, apart from app.ts so that the route modules app.ts
 * mounts do not import it back (no import cycle, type-only ones included).
 */
import type Router from '@koa/router';
import type { Dependencies } from '../dependencies';
import type { AppState } from './context';
import type { rateLimit } from './middleware/rateLimit';
import type { SignInGuard } from './auth/routes';

/** What route modules are built with: the process's dependencies, and the limiters shared by the /v1 and /api/v1 mounts. */
export interface RouteDeps extends Dependencies {
  /** Per client (IPv6 by /64): the public claim routes, and the pay page in a window of its own. */
  publicClaimLimit: ReturnType<typeof rateLimit>;
  payPageLimit: ReturnType<typeof rateLimit>;
  /** Sign-in throttling, shared by POST /v1/auth and the console's sign-in, and its refusals' count. */
  signIn: SignInGuard;
  /** The console sessions' clock: when a session starts and whether it has expired. */
  consoleClock: () => Date;
}
export type RouteModule = (router: Router<AppState>, deps: RouteDeps) => void;
