/** Runs the real Koa app on a loopback port and talks to it over HTTP. */
import type { Server } from 'node:http';
import { createApp, AppDeps } from '../../src/api/app';
import { httpServer } from '../../src/api/httpServer';
import { createAccount } from '../../src/services/accounts/accounts';
import { startDomains } from '../../src/startup/runtime';
import type { TemporalContext } from '../../src/temporal/context';
import { testDependencies, TestDependencyOptions } from './dependencies';

export interface TestApi {
  url: string;
  close: () => Promise<void>;
}

/**
 * The app with every domain wired; `temporal` null means services start no workflows (and
 * allocate inline). `overrides` may also replace dependencies (price oracle, workflow clients).
 */
export async function startTestApi(
  overrides: Partial<AppDeps> & Pick<TestDependencyOptions, 'workflowOverrides'> = {},
  env: Record<string, string> = {},
  temporal: TemporalContext | null = null,
): Promise<TestApi> {
  const deps = testDependencies({ ...overrides, env, temporal });
  const stopDomains = await startDomains(deps);
  const app = createApp({ ...overrides, ...deps });
  const server: Server = await new Promise((resolve) => {
    const s = httpServer(app, deps.config).listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((r) => server.close(() => r()));
      await stopDomains();
    },
  };
}

export interface JsonResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(baseUrl: string, token?: string) {
  async function request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse<T>> {
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* keep text */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }
  return {
    request,
    get: <T = any>(p: string, h?: Record<string, string>) => request<T>('GET', p, undefined, h),
    post: <T = any>(p: string, b?: unknown, h?: Record<string, string>) => request<T>('POST', p, b ?? {}, h),
    patch: <T = any>(p: string, b?: unknown) => request<T>('PATCH', p, b ?? {}),
    put: <T = any>(p: string, b?: unknown) => request<T>('PUT', p, b ?? {}),
    del: <T = any>(p: string) => request<T>('DELETE', p),
  };
}

export type Client = ReturnType<typeof client>;

let seq = 0;
/** A fresh account with production and sandbox clients. */
export async function newAccount(url: string, opts: { totp?: boolean } = {}) {
  seq += 1;
  const email = `owner${seq}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await createAccount({ email, password: 'correct horse battery', totp: opts.totp });
  return { ...created, password: 'correct horse battery', api: client(url, created.token), sandbox: client(url, created.sandbox_token) };
}
