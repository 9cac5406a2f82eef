/** The README's ten-line Koa receiver, run as written against a signed delivery. */
import type { Server } from 'node:http';
import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { verifyWebhookSignature, signWebhook } from '../../src/cryptography/webhookSignature';

function readmeReceiver(secret: string, seen: string[]) {
  // --- README example (secret from the environment there) ---
  const app = new Koa();
  app.use(bodyParser({ enableTypes: ['json'] })); // keeps the raw body in ctx.request.rawBody
  app.use(async (ctx) => {
    const ok = await verifyWebhookSignature(ctx.request.rawBody, ctx.get('X-Service-Signature'), secret);
    if (!ok) return void (ctx.status = 400);
    const { id, event } = ctx.request.body as { id: string; event: string }; // dedupe on id
    seen.push(`${id} ${event}`);
    ctx.status = 204;
  });
  // --- end ---
  return app;
}

describe('README receiver example', () => {
  it('accepts a correctly signed delivery and refuses a tampered or stale one', async () => {
    const secret = `whsec_${'1f'.repeat(32)}`;
    const seen: string[] = [];
    const server: Server = await new Promise((r) => {
      const s = readmeReceiver(secret, seen).listen(0, '127.0.0.1', () => r(s));
    });
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    const body = JSON.stringify({ id: 'evt_1', event: 'customer.created', payload: { id: 'cust_1', object: 'customer' }, timestamp: new Date().toISOString() });
    const post = async (raw: string, sig: string) =>
      (await fetch(url, { method: 'POST', body: raw, headers: { 'Content-Type': 'application/json', 'X-Service-Signature': sig } })).status;
    try {
      const now = Math.floor(Date.now() / 1000);
      expect(await post(body, await signWebhook(secret, now, body))).toBe(204);
      expect(await post(body.replace('cust_1', 'cust_2'), await signWebhook(secret, now, body))).toBe(400);
      expect(await post(body, await signWebhook(secret, now - 301, body))).toBe(400);
      expect(await post(body, await signWebhook(`whsec_${'2e'.repeat(32)}`, now, body))).toBe(400);
      expect(seen).toEqual(['evt_1 customer.created']);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
