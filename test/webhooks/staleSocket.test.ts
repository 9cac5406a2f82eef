/**
 * A kept-alive socket the receiver closed meanwhile is not the endpoint being down: the POST
 * goes again on another socket instead of reporting a connection error (which disables the
 * endpoint). Real HTTPS on loopback; the receiver resets the connection of every second
 * request on a socket, as one that closed an idle keep-alive connection would look.
 */
import https from 'node:https';
import { postWebhook } from '../../src/lib/outgoingHttp';
import { makeTestCertificates } from '../support/httpsReceiver';

it('retries on a fresh socket when a reused one is reset, and still reports a reset of a fresh one', async () => {
  const certs = makeTestCertificates();
  const perSocket = new WeakMap<object, number>();
  let requests = 0;
  let resetFresh = false;
  const server = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    requests += 1;
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    req.resume();
    req.on('end', () => {
      if (n >= 2 || resetFresh) req.socket.destroy();
      else res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `https://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const agent = new https.Agent({ keepAlive: true, ca: certs.ca, maxSockets: 1 });
  const post = () => postWebhook(url, { 'Content-Type': 'application/json' }, '{}', { agent, allowPrivate: true, allowedPorts: null, timeoutMs: 5_000 });
  try {
    expect((await post()).statusCode).toBe(200);
    // The next POST goes out on the kept-alive socket, which the receiver resets.
    const again = await post();
    expect(again).toMatchObject({ statusCode: 200, error: null });
    expect(requests).toBe(3);
    // A fresh connection reset before any response still counts as a connection error.
    resetFresh = true;
    agent.destroy();
    const fresh = await postWebhook(url, {}, '{}', { agent: new https.Agent({ ca: certs.ca }), allowPrivate: true, allowedPorts: null, timeoutMs: 5_000 });
    expect(fresh).toMatchObject({ statusCode: null, error: 'connection_error' });
  } finally {
    agent.destroy();
    await new Promise((r) => server.close(() => r(undefined)));
  }
});
