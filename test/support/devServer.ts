/**
 * A Temporal dev server of a test's own (TEST_TEMPORAL_CLI), with its state in a file so that it
 * survives a stop: for tests of what happens while Temporal is down.
 */
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { closedPort } from './httpsReceiver';
import { waitFor } from './wait';

export async function portOpen(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(p, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

export class OwnDevServer {
  private child: ChildProcess | null = null;
  private readonly dbFile: string;

  private constructor(readonly port: number, name: string) {
    this.dbFile = path.join(process.env.TEST_RUN_DIR ?? os.tmpdir(), `${name}-${process.pid}-${Date.now()}.db`);
  }

  static async create(name: string): Promise<OwnDevServer> {
    return new OwnDevServer(await closedPort(), name);
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const cli = process.env.TEST_TEMPORAL_CLI;
    if (!cli) throw new Error('TEST_TEMPORAL_CLI is not set: run the tests with `npm test`');
    // A server that exits before its port opens (the port briefly held by another socket on a
    // busy machine) is started again, up to three times; its own words go into the error.
    let output = '';
    for (let attempt = 1; ; attempt++) {
      const child = spawn(cli, ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(this.port), '--namespace', 'default',
        '--db-filename', this.dbFile, '--headless', '--log-level', 'error'], { stdio: ['ignore', 'pipe', 'pipe'] });
      output = '';
      const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4_000); };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      this.child = child;
      const opened = await waitFor(async () => (child.exitCode !== null || child.signalCode !== null ? 'exited' : (await portOpen(this.port)) && 'open'),
        'the Temporal dev server port', 90_000).catch(() => 'timed out');
      if (opened === 'open') break;
      if (opened === 'timed out') child.kill('SIGKILL');
      if (opened === 'timed out' || attempt === 3) throw new Error(`the Temporal dev server on ${this.address} did not open its port (${opened}, ${attempt} attempts): ${output.trim() || 'no output'}`);
      await new Promise((r) => setTimeout(r, 2_000));
    }
    // The port opens before the frontend serves: until then calls answer "Frontend is not healthy yet".
    await waitFor(() => this.healthy(), 'the Temporal dev server to answer', 90_000);
  }

  private async healthy(): Promise<boolean> {
    const connection = await Connection.connect({ address: this.address, connectTimeout: 2_000 }).catch(() => null);
    if (!connection) return false;
    try {
      await connection.withDeadline(Date.now() + 2_000, () => connection.workflowService.getSystemInfo({}));
      return true;
    } catch {
      return false;
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    await waitFor(async () => !(await portOpen(this.port)), 'the Temporal port to close');
  }
}
