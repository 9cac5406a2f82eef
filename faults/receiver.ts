/**
 * HTTPS webhook receivers for the scenarios (webhook URLs must be https://): a throwaway CA the
 * worker trusts through NODE_EXTRA_CA_CERTS, as an operator would add a private CA.
 */
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { makeTestCertificates, TestCertificates } from '../test/support/httpsReceiver';

export interface ReceiverCa {
  certs: TestCertificates;
  /** Environment for the worker process: trusts the CA. */
  env: Record<string, string>;
}

export function receiverCa(runDir: string): ReceiverCa {
  const certs = makeTestCertificates();
  const file = join(runDir, `receiver-ca-${process.pid}-${Date.now()}.crt`);
  writeFileSync(file, certs.ca);
  return { certs, env: { NODE_EXTRA_CA_CERTS: file } };
}

export interface Receiver {
  url: string;
  server: https.Server;
  close: () => Promise<void>;
}

/** Answers each request with `answer(eventId, request, raw body)` (a status code). */
export function startReceiver(ca: ReceiverCa, answer: (eventId: string, req: IncomingMessage, body: string) => number): Promise<Receiver> {
  const server = https.createServer({ key: ca.certs.key, cert: ca.certs.cert }, (req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => res.writeHead(answer(String(req.headers['x-service-event-id'] ?? ''), req, Buffer.concat(chunks).toString('utf8'))).end());
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `https://127.0.0.1:${port}/hook`,
        server,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
