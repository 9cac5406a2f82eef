/** Raw HTTP/1.1 over one socket, to see what a server does with a keep-alive connection. */
import net from 'node:net';

/**
 * One keep-alive connection: sends `first` (the head and as much of its body as given), then, once
 * its answer is in, a GET /healthz on the same connection. What came back, and whether the server
 * closed the connection before the second request went out or had to be read as one.
 */
export function reuseAfter(url: string, first: string, waitMs = 3_000): Promise<{ answers: string; closedByServer: boolean; ms: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const start = Date.now();
    let answers = '';
    let secondSent = false;
    let closedByServer = false;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ answers, closedByServer, ms: Date.now() - start });
    };
    const timer = setTimeout(done, waitMs);
    let secondWritten = false;
    // A close with our body still unread may come as a reset rather than an end.
    const closed = () => {
      closedByServer = !secondWritten && answers !== '';
      done();
    };
    socket.on('error', (err) => (answers === '' ? reject(err) : closed()));
    socket.on('end', closed);
    socket.on('data', (chunk) => {
      answers += chunk.toString('latin1');
      if (!secondSent && answers.includes('\r\n\r\n')) {
        secondSent = true;
        // A moment for the server to close first, as a balancer's next request may come later.
        setTimeout(() => {
          if (closedByServer || !socket.writable) return;
          secondWritten = true;
          socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
        }, 100);
      }
    });
    socket.write(first);
  });
}

/** A GET /healthz, then another on the same connection after `idleMs`: whether the server had closed it by then, and the second answer. */
export function reuseAfterIdle(url: string, idleMs: number): Promise<{ closed: boolean; second: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let data = '';
    let closed = false;
    socket.on('data', (c) => (data += c.toString('latin1')));
    socket.on('close', () => (closed = true));
    socket.on('error', () => (closed = true));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    setTimeout(() => {
      const before = data.length;
      if (!closed) socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      setTimeout(() => {
        socket.destroy();
        resolve({ closed, second: data.slice(before) });
      }, 500);
    }, idleMs);
  });
}
