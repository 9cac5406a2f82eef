/**
 * The worker's scrape target: GET /metrics answers the domain metrics of `register` followed
 * by the Temporal SDK's own (its exporter listens on loopback; one target to scrape instead of two).
 */
import http from 'node:http';
import net from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { bearerMatches } from '../cryptography/tokens';
import { isLoopbackHost } from '../lib/network';

export interface MetricsServerOptions {
  register: Registry;
  host: string;
  /** 0: a free port (see `port` of the result). */
  port: number;
  /** METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <it>`; null: none asked (loopback only, see `metricsHost`). */
  token: string | null;
  /** The Temporal SDK's Prometheus endpoint, appended to every scrape; null: none. */
  temporalMetricsUrl: string | null;
  logger: Logger;
  /** How long a scrape waits for the SDK's exporter before answering without it. */
  temporalTimeoutMs?: number;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Where the worker's /metrics listens: HOST when METRICS_TOKEN guards it, else loopback only
 * (what it shows is no business of the network without a token).
 */
export function metricsHost(host: string, token: string | null): string {
  return token !== null || isLoopbackHost(host) ? host : '127.0.0.1';
}

/** A port free on `host` right now: the SDK's exporter cannot tell which port it got for 0. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function temporalMetrics(opts: MetricsServerOptions): Promise<string> {
  if (!opts.temporalMetricsUrl) return '';
  try {
    const res = await fetch(opts.temporalMetricsUrl, { signal: AbortSignal.timeout(opts.temporalTimeoutMs ?? 2_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return await res.text();
  } catch (err) {
    // The domain metrics are still worth serving; the missing temporal_* series show the gap.
    opts.logger.warn({ err, url: opts.temporalMetricsUrl }, 'metrics: the Temporal SDK exporter did not answer');
    return '';
  }
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (opts.token !== null && !bearerMatches(req.headers.authorization, opts.token)) {
      res.writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer realm="metrics"' }).end('unauthorized\n');
      return;
    }
    Promise.all([opts.register.metrics(), temporalMetrics(opts)]).then(
      ([ours, sdk]) => {
        res.writeHead(200, { 'Content-Type': opts.register.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : sdk ? `${ours}\n${sdk}` : ours);
      },
      (err) => {
        opts.logger.error({ err }, 'metrics: scrape failed');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('scrape failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's idle keep-alive connection would hold close() open.
        server.closeAllConnections();
      }),
  };
}
