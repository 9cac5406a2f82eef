/**
 * A real HTTPS receiver for webhook tests: a throwaway CA and a leaf certificate for
 * localhost/127.0.0.1 made with the openssl CLI at test time, and a server whose answer each
 * test programs. The CA is trusted through an injected https.Agent.
 */
import https from 'node:https';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';

export interface TestCertificates {
  ca: string;
  key: string;
  cert: string;
}

/** A CA and a server certificate it signed, for DNS:localhost and IP:127.0.0.1. */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(process.env.TEST_RUN_DIR ?? tmpdir(), 'webhook-ca-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=webhook test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    ssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
    writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n');
    ssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.crt', '-days', '2', '-extfile', 'leaf.ext');
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    return { ca: read('ca.crt'), key: read('leaf.key'), cert: read('leaf.crt') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ReceivedRequest {
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  body?: string;
}

/** What to answer the n-th request (0-based) to a path; async so a test can act in between. */
export type Responder = (req: ReceivedRequest, n: number) => Answer | Promise<Answer>;

export interface HttpsReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Answer requests to `path` with `responder` (default: 200 "ok"). */
  route(path: string, responder: Responder): void;
  on(listener: (req: ReceivedRequest) => void): void;
  requestsTo(path: string): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startHttpsReceiver(certs: TestCertificates, host = '127.0.0.1'): Promise<HttpsReceiver> {
  const requests: ReceivedRequest[] = [];
  const routes = new Map<string, Responder>();
  const counts = new Map<string, number>();
  const listeners: ((req: ReceivedRequest) => void)[] = [];
  const server = https.createServer({ key: certs.key, cert: certs.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = req.url ?? '/';
      const received: ReceivedRequest = { at: Date.now(), path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(received);
      for (const l of listeners) l(received);
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      const responder = routes.get(path);
      try {
        const answer = responder ? await responder(received, n) : { status: 200, body: 'ok' };
        res.writeHead(answer.status, { 'Content-Type': 'text/plain' });
        res.end(answer.body ?? '');
      } catch {
        res.writeHead(500);
        res.end('responder failed');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `https://${host}:${port}`,
    port,
    requests,
    route: (path, responder) => void routes.set(path, responder),
    on: (l) => void listeners.push(l),
    requestsTo: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (connection refused). */
export async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}
