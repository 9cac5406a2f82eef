/**
 * The API's HTTP server (node:http, on Node and under Deno's node:http), not yet listening, with
 * the configured timeouts: idle keep-alive connections outlive a load balancer's idle timeout, so
 * the balancer closes them, never the API just as the balancer reuses one (a reset, a 502).
 */
import { createServer, Server } from 'node:http';
import type Koa from 'koa';
import type { Config } from '../config';

export function httpServer(app: Pick<Koa, 'callback'>, config: Pick<Config, 'httpKeepAliveTimeoutMs' | 'httpHeadersTimeoutMs'>): Server {
  const server = createServer(app.callback());
  server.keepAliveTimeout = config.httpKeepAliveTimeoutMs;
  // Node's rule: above the keep-alive timeout, else an idle connection could be cut by it first.
  server.headersTimeout = config.httpHeadersTimeoutMs;
  return server;
}
