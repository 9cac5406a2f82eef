/**
 * All outgoing HTTP to addresses our users choose (webhook endpoints), with the guard against
 * server-side request forgery in one place (as outline's server/utils/fetch.ts): a private,
 * loopback or link-local target is refused, for an IP literal before connecting and for a name
 * at DNS resolution, so the address checked is the address connected to.
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS (tests, local receivers) lifts it. Operator-configured URLs
 * (price oracle, chain nodes) are not guarded: they may well be on a private network.
 */
import https from 'node:https';
import dns from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isAllowedWebhookPort, isIpLiteral, isPrivateAddress } from './network';
import { RESPONSE_SNIPPET_BYTES } from '../temporal/webhookDefinitions';

/** Why a request got no status: retried (timeout, TLS) or disabling (connection, private address, port not allowed). */
export type RequestErrorKind = 'timeout' | 'tls_error' | 'connection_error' | 'private_address' | 'port_not_allowed';

export interface HttpOutcome {
  statusCode: number | null;
  error: RequestErrorKind | null;
  errorDetail: string | null;
  latencyMs: number;
  body: string | null;
}

/**
 * Whether a URL points to a private, loopback or link-local address: an IP literal, a
 * `localhost` name, or a name that resolves to one. A name that does not resolve yet is not
 * (DNS may still be propagating): requests check the resolved address again when they connect.
 */
export async function isPrivateTarget(url: URL): Promise<boolean> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIpLiteral(host)) return isPrivateAddress(host);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const addresses = await lookup(host, { all: true }).catch(() => []);
  return addresses.some((a) => isPrivateAddress(a.address));
}

class PrivateAddressError extends Error {
  code = 'PRIVATE_ADDRESS';
}

class PortNotAllowedError extends Error {
  code = 'PORT_NOT_ALLOWED';
}

/** Errors of a reused keep-alive socket that the other side had already closed. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);
/** The agent may hand out several stale sockets in a row. */
const MAX_STALE_SOCKET_RETRIES = 3;
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ECONNABORTED', 'EADDRNOTAVAIL']);

/** Connection error (refused, reset before a response, DNS failure) disables; timeouts and TLS errors retry. */
export function classifyRequestError(err: unknown): { kind: RequestErrorKind; detail: string } {
  const e = err as { code?: string; message?: string };
  const code = e?.code ?? '';
  const detail = code || e?.message || 'unknown error';
  if (err instanceof PrivateAddressError) return { kind: 'private_address', detail: e.message! };
  if (err instanceof PortNotAllowedError) return { kind: 'port_not_allowed', detail: e.message! };
  if (code === 'ETIMEDOUT') return { kind: 'timeout', detail };
  if (CONNECTION_CODES.has(code)) return { kind: 'connection_error', detail };
  // Certificate and handshake failures: OpenSSL codes, ERR_TLS_*/ERR_SSL_*, EPROTO.
  return { kind: 'tls_error', detail };
}

/** DNS resolution that refuses private addresses, so the address checked is the address connected to. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      if (!allowPrivate) {
        const bad = addresses.find((a) => isPrivateAddress(a.address));
        if (bad) return callback(new PrivateAddressError(`${hostname} resolves to ${bad.address}`));
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}

/** One signed POST: status and the first 1 KiB of the body, or the kind of error. Never throws. */
export function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  /** `allowedPorts` besides 443 (WEBHOOK_ALLOWED_PORTS); null: any port. */
  opts: { agent: https.Agent; allowPrivate: boolean; allowedPorts: readonly number[] | null; timeoutMs: number },
): Promise<HttpOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (r: Omit<HttpOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, latencyMs: Math.round(performance.now() - started) });
    };
    const fail = (err: unknown) => {
      const { kind, detail } = classifyRequestError(err);
      finish({ statusCode: null, error: kind, errorDetail: detail, body: null });
    };
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // Checked again here: an endpoint saved before the rule (or before the list changed) sends nothing.
    if (!isAllowedWebhookPort(target, opts.allowedPorts)) {
      fail(new PortNotAllowedError(`port ${target.port} is not allowed (WEBHOOK_ALLOWED_PORTS)`));
      return;
    }
    // An IP literal is connected to without a lookup, so check it here.
    if (!opts.allowPrivate && isIpLiteral(host) && isPrivateAddress(host)) {
      fail(new PrivateAddressError(`${host} is a private address`));
      return;
    }
    let req: ReturnType<typeof https.request>;
    timer = setTimeout(() => {
      finish({ statusCode: null, error: 'timeout', errorDetail: `no complete response within ${opts.timeoutMs} ms`, body: null });
      req.destroy();
    }, opts.timeoutMs);
    const send = (staleRetries: number) => {
      req = https.request(
        target,
        {
          method: 'POST',
          agent: opts.agent,
          lookup: guardedLookup(opts.allowPrivate),
          headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            if (size < RESPONSE_SNIPPET_BYTES) chunks.push(c);
            size += c.length;
          });
          const done = () =>
            finish({
              statusCode: res.statusCode ?? null,
              error: null,
              errorDetail: null,
              body: Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES).toString('utf8'),
            });
          res.on('end', done);
          // The status arrived; a body cut short does not change what the receiver answered.
          res.on('error', done);
          res.on('aborted', done);
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the receiver closed meanwhile fails at once: not the endpoint being
        // down (which disables it), so the request goes again on another socket (Node's advice;
        // receivers dedupe on the event id).
        if (!settled && req.reusedSocket && STALE_SOCKET_CODES.has(err.code ?? '') && staleRetries > 0) send(staleRetries - 1);
        else fail(err);
      });
      req.end(body);
    };
    send(MAX_STALE_SOCKET_RETRIES);
  });
}
