/**
 * The Koa receiver of docs/webhooks.md ("A receiver"), taken from the page as it stands and run in
 * a child process against signed deliveries: a change to the snippet is tested, not a copy of it.
 * Two things differ from the text, both checked to apply exactly once: the import of
 * `./src/...` is made relative to where the snippet is written (test/.tmp/), and its fixed port
 * is swapped for a free one by a preload that wraps `net.Server.prototype.listen`.
 */
import { spawn, ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { signWebhook } from '../../src/cryptography/webhookSignature';

const ROOT = join(__dirname, '..', '..');
const TMP = join(ROOT, 'test', '.tmp');

/** The one ```ts block of the page that uses verifyWebhookSignature, and the port it listens on. */
export function pageReceiver(page: string): { code: string; port: number } {
  const blocks = [...page.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]).filter((b) => b.includes('verifyWebhookSignature'));
  expect(blocks).toHaveLength(1);
  const listens = [...blocks[0].matchAll(/\.listen\((\d+)\)/g)];
  expect(listens).toHaveLength(1);
  return { code: blocks[0], port: Number(listens[0][1]) };
}

describe('docs/webhooks.md receiver example', () => {
  let child: ChildProcess | undefined;
  const files: string[] = [];
  afterAll(() => {
    child?.kill();
    for (const f of files) rmSync(f, { force: true });
  });

  it('as written in docs/webhooks.md: accepts a correctly signed delivery and refuses a tampered, stale or foreign one', async () => {
    const { code, port } = pageReceiver(readFileSync(join(ROOT, 'docs', 'webhooks.md'), 'utf8'));
    expect(code.split("from './src/").length - 1).toBe(1);
    mkdirSync(TMP, { recursive: true });
    const snippet = join(TMP, `readme-receiver-${process.pid}.ts`);
    const preload = join(TMP, `readme-receiver-${process.pid}.cjs`);
    files.push(snippet, preload);
    writeFileSync(snippet, code.replace("from './src/", "from '../../src/"));
    writeFileSync(
      preload,
      `const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args[0] === ${port}) {
    args[0] = 0;
    this.once('listening', () => process.stderr.write('LISTENING ' + this.address().port + '\\n'));
  }
  return listen.apply(this, args);
};
`,
    );

    const secret = `whsec_${'1f'.repeat(32)}`;
    child = spawn(process.execPath, ['--require', preload, '--import', 'tsx', snippet], { cwd: ROOT, env: { ...process.env, WEBHOOK_SECRET: secret } });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    const bound = await new Promise<number>((resolve, reject) => {
      child!.stderr!.on('data', (d) => {
        stderr += d;
        const m = /LISTENING (\d+)/.exec(stderr);
        if (m) resolve(Number(m[1]));
      });
      child!.on('exit', (c) => reject(new Error(`the docs/webhooks.md snippet exited (${c}): ${stderr}`)));
    });

    const url = `http://127.0.0.1:${bound}/`;
    const body = JSON.stringify({ id: 'evt_1', event: 'customer.created', payload: { id: 'cust_1', object: 'customer' }, timestamp: new Date().toISOString() });
    const post = async (raw: string, sig: string) =>
      (await fetch(url, { method: 'POST', body: raw, headers: { 'Content-Type': 'application/json', 'X-Service-Signature': sig } })).status;
    const now = Math.floor(Date.now() / 1000);
    expect(await post(body, await signWebhook(secret, now, body))).toBe(204);
    expect(await post(body.replace('cust_1', 'cust_2'), await signWebhook(secret, now, body))).toBe(400);
    expect(await post(body, await signWebhook(secret, now - 301, body))).toBe(400);
    expect(await post(body, await signWebhook(`whsec_${'2e'.repeat(32)}`, now, body))).toBe(400);
    expect(await post(body, '')).toBe(400);
    // The snippet logs what it accepted (id, event, payload id), and nothing else.
    await new Promise((r) => setTimeout(r, 100));
    expect(stdout.trim().split('\n')).toEqual(['evt_1 customer.created cust_1']);
  });
});
