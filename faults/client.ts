/**
 * An API client that retries as the README tells clients to: the same Idempotency-Key on a
 * connection error, a 5xx or a 409 idempotency_conflict (a request of a killed process still
 * holds the key until its reservation goes stale), until the request lands or a deadline passes.
 */
import { randomUUID } from 'node:crypto';
import { sleep } from './stack';

export interface Answer<T = any> {
  status: number;
  body: T;
  /** Attempts made (1 when the first one landed). */
  attempts: number;
  /** Statuses (or 'connection') of the attempts that did not land. */
  failures: (number | 'connection')[];
  /** Of the 'connection' failures, those cut after the connection was made (in flight; not refused). */
  dropped: number;
}

export function apiClient(baseUrl: () => string, token: string, opts: { deadlineMs?: number } = {}) {
  const deadlineMs = opts.deadlineMs ?? 180_000;
  async function once(method: string, path: string, body: unknown, key: string | null) {
    const res = await fetch(baseUrl() + path, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...(key ? { 'Idempotency-Key': key } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* keep text */
    }
    return { status: res.status, body: parsed };
  }

  /** Retried until it lands: a 2xx, or a 4xx other than a stuck key's 409. */
  async function request<T = any>(method: string, path: string, body?: unknown, key: string | null = method === 'GET' ? null : randomUUID()): Promise<Answer<T>> {
    const failures: Answer['failures'] = [];
    let dropped = 0;
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 1; ; attempt++) {
      let status: number | 'connection';
      try {
        const r = await once(method, path, body, key);
        const retry = r.status >= 500 || (r.status === 409 && r.body?.error?.code === 'idempotency_conflict');
        if (!retry) return { status: r.status, body: r.body, attempts: attempt, failures, dropped };
        status = r.status;
      } catch (err) {
        status = 'connection';
        if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNREFUSED') dropped += 1;
      }
      failures.push(status);
      if (Date.now() > deadline) throw new Error(`${method} ${path} did not land within ${deadlineMs} ms (${failures.length} failed attempts, last ${status})`);
      await sleep(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)));
    }
  }

  return {
    request,
    get: <T = any>(path: string) => request<T>('GET', path),
    post: <T = any>(path: string, body: unknown, key?: string) => request<T>('POST', path, body, key ?? randomUUID()),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

export { pool } from '../bench/support';
