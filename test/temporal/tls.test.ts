/**
 * Temporal over TLS (TEMPORAL_TLS_*, TEMPORAL_API_KEY; docs/architecture.md, "Exposing Temporal"), on both client
 * transports, from the settings as loadConfig reads them. The dev server speaks no TLS, so a
 * TLS-terminating proxy stands in front of it with a throwaway CA (openssl): it demands a client
 * certificate signed by that CA and records the certificate and the server name (SNI) each
 * connection presented, then passes the bytes to the dev server. A second endpoint, an HTTP/2
 * server without client certificates, records the `authorization` header and answers each call
 * with an empty gRPC message (all getSystemInfo needs).
 */
import { execFileSync } from 'node:child_process';
import http2 from 'node:http2';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { ConfigError, loadConfig } from '../../src/config';
import { connectTemporal, pingTemporal, TemporalClientTransport } from '../../src/temporal/client';
import { devServerAddress } from '../support/temporal';

const SERVER_NAME = 'temporal.payments.test';
let dir: string;
const file = (name: string) => join(dir, name);

/** A CA (`name`.crt/.key) and, signed by it, a server certificate for SERVER_NAME only and a client certificate. */
function makePki(ssl: (...args: string[]) => void, name: string) {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', `${name}-ca.key`, '-out', `${name}-ca.crt`, '-days', '2', '-subj', `/CN=${name} test CA`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  const leaf = (leafName: string, cn: string, ext: string) => {
    ssl('req', ...ec, '-keyout', `${leafName}.key`, '-out', `${leafName}.csr`, '-subj', `/CN=${cn}`);
    writeFileSync(file(`${leafName}.ext`), ext);
    ssl('x509', '-req', '-in', `${leafName}.csr`, '-CA', `${name}-ca.crt`, '-CAkey', `${name}-ca.key`, '-CAcreateserial', '-out', `${leafName}.crt`, '-days', '2', '-extfile', `${leafName}.ext`);
  };
  // The server's certificate names SERVER_NAME, not 127.0.0.1: only the server name override verifies it.
  leaf(`${name}-server`, SERVER_NAME, `subjectAltName=DNS:${SERVER_NAME}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`);
  leaf(`${name}-client`, `payments-client-${name}`, 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
}

interface Seen {
  serverName: string | false;
  clientCn: string | null;
  authorized: boolean;
}

/** The TLS-terminating proxy in front of the dev server, with mutual TLS. */
async function mtlsProxy(upstream: string): Promise<{ address: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const [host, port] = [upstream.slice(0, upstream.lastIndexOf(':')), Number(upstream.slice(upstream.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  const server = tls.createServer(
    { key: readFileSync(file('right-server.key')), cert: readFileSync(file('right-server.crt')), ca: readFileSync(file('right-ca.crt')), requestCert: true, rejectUnauthorized: true, ALPNProtocols: ['h2'] },
    (socket) => {
      const peer = socket.getPeerCertificate();
      // The SNI the client sent (set on the server side; not in @types/node).
      seen.push({ serverName: (socket as tls.TLSSocket & { servername: string | false }).servername, clientCn: peer?.subject?.CN ?? null, authorized: socket.authorized });
      const out = net.connect(port, host);
      sockets.add(socket).add(out);
      socket.pipe(out).pipe(socket);
      const end = () => {
        socket.destroy();
        out.destroy();
      };
      socket.on('error', end).on('close', end);
      out.on('error', end).on('close', end);
    },
  );
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** An HTTP/2 TLS endpoint (server certificate only) that records each call's `authorization` and answers it with an empty message. */
async function recordingEndpoint(): Promise<{ address: string; authorizations: (string | undefined)[]; close(): Promise<void> }> {
  const authorizations: (string | undefined)[] = [];
  const server = http2.createSecureServer({ key: readFileSync(file('right-server.key')), cert: readFileSync(file('right-server.crt')), allowHTTP1: false });
  server.on('stream', (stream, headers) => {
    authorizations.push(headers.authorization as string | undefined);
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(process.env.TEST_RUN_DIR ?? tmpdir(), 'temporal-tls-'));
  const ssl = (...args: string[]) => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  makePki(ssl, 'right');
  makePki(ssl, 'wrong');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The settings of a process that reaches Temporal with mutual TLS through the proxy. */
const mtlsEnv = (ca = 'right') => ({
  TEMPORAL_TLS_CERT: file('right-client.crt'),
  TEMPORAL_TLS_KEY: file('right-client.key'),
  TEMPORAL_TLS_CA: file(`${ca}-ca.crt`),
  TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
});

describe.each<TemporalClientTransport>(['grpc-js', 'native'])('Temporal over TLS, %s transport', (clientTransport) => {
  it('presents the client certificate and the server name, verifies the server against TEMPORAL_TLS_CA, and reaches the namespace', async () => {
    const proxy = await mtlsProxy(devServerAddress());
    try {
      const config = loadConfig(mtlsEnv());
      const handle = await connectTemporal({ ...config.temporal, address: proxy.address, clientTransport });
      try {
        await pingTemporal(handle);
        const ns = await handle.connection.workflowService.describeNamespace({ namespace: config.temporal.namespace });
        expect(ns.namespaceInfo?.name).toBe('default');
      } finally {
        await handle.connection.close();
      }
      expect(proxy.seen.length).toBeGreaterThan(0);
      for (const s of proxy.seen) expect(s).toEqual({ serverName: SERVER_NAME, clientCn: 'payments-client-right', authorized: true });
    } finally {
      await proxy.close();
    }
  });

  it('refuses a server its CA did not sign, and is refused without a client certificate', async () => {
    const proxy = await mtlsProxy(devServerAddress());
    try {
      const connect = (env: Record<string, string>) =>
        connectTemporal({ ...loadConfig(env).temporal, address: proxy.address, clientTransport }).then(async (h) => {
          // A transport that connects lazily fails on the first call.
          try {
            await pingTemporal(h);
          } finally {
            await h.connection.close();
          }
        });
      await expect(connect(mtlsEnv('wrong'))).rejects.toThrow();
      const { TEMPORAL_TLS_CERT: _c, TEMPORAL_TLS_KEY: _k, ...noClientCert } = mtlsEnv();
      await expect(connect(noClientCert)).rejects.toThrow();
      // No connection got past the handshake (the proxy records only those).
      expect(proxy.seen).toEqual([]);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('sends TEMPORAL_API_KEY as a bearer token, over TLS', async () => {
    const endpoint = await recordingEndpoint();
    try {
      const config = loadConfig({ TEMPORAL_API_KEY: 'tcld-test-key.0123456789', TEMPORAL_TLS_CA: file('right-ca.crt'), TEMPORAL_TLS_SERVER_NAME: SERVER_NAME });
      const handle = await connectTemporal({ ...config.temporal, address: endpoint.address, clientTransport });
      try {
        await pingTemporal(handle);
      } finally {
        await handle.connection.close();
      }
      expect(endpoint.authorizations.length).toBeGreaterThan(0);
      for (const a of endpoint.authorizations) expect(a).toBe('Bearer tcld-test-key.0123456789');
    } finally {
      await endpoint.close();
    }
  });
});

describe('Temporal TLS settings', () => {
  it('are off by default, on with TEMPORAL_TLS=true (system roots), and on whenever a certificate, CA, server name or API key is set', () => {
    expect(loadConfig({}).temporal).toMatchObject({ tls: null, apiKey: null });
    expect(loadConfig({ TEMPORAL_TLS: 'true' }).temporal.tls).toEqual({});
    expect(loadConfig({ TEMPORAL_API_KEY: 'k.1' }).temporal).toMatchObject({ tls: {}, apiKey: 'k.1' });
    expect(loadConfig({ TEMPORAL_TLS_SERVER_NAME: SERVER_NAME }).temporal.tls).toEqual({ serverNameOverride: SERVER_NAME });
    const tlsConfig = loadConfig(mtlsEnv()).temporal.tls!;
    // The files are read once, here: their contents, not their paths, go to the SDK.
    expect(Buffer.from(tlsConfig.clientCertPair!.crt).toString()).toBe(readFileSync(file('right-client.crt'), 'utf8'));
    expect(Buffer.from(tlsConfig.clientCertPair!.key).toString()).toBe(readFileSync(file('right-client.key'), 'utf8'));
    expect(Buffer.from(tlsConfig.serverRootCACertificate!).toString()).toBe(readFileSync(file('right-ca.crt'), 'utf8'));
  });

  it.each([
    [{ TEMPORAL_TLS_CERT: 'right-client.crt' }, /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/],
    [{ TEMPORAL_TLS_KEY: 'right-client.key' }, /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/],
    [{ TEMPORAL_TLS_CA: 'missing.crt' }, /TEMPORAL_TLS_CA: cannot read ".*missing.crt" \(ENOENT\)/],
    [{ TEMPORAL_TLS_CERT: 'right-client.key', TEMPORAL_TLS_KEY: 'right-client.key' }, /TEMPORAL_TLS_CERT: ".*" is not a PEM certificate/],
    [{ TEMPORAL_TLS_CERT: 'right-client.crt', TEMPORAL_TLS_KEY: 'right-client.crt' }, /TEMPORAL_TLS_KEY: ".*" is not a PEM private key/],
    [{ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k.1' }, /TEMPORAL_TLS=false contradicts/],
    [{ TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: 'right-ca.crt' }, /TEMPORAL_TLS=false contradicts/],
    [{ TEMPORAL_API_KEY: 'two words' }, /TEMPORAL_API_KEY must be printable ASCII/],
  ])('stop start-up on %j', (settings, message) => {
    const files = ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA'];
    const env = Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, files.includes(k) ? file(v) : v]));
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
