import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhookSignature } from '../../src/cryptography/webhookSignature';

const secret = `whsec_${'ab'.repeat(32)}`;
const body = '{"id":"evt_1"}';
const t = 1_800_000_000;
const v1 = (s: string, ts: number | string, b: string) => createHmac('sha256', s).update(`${ts}.${b}`).digest('hex');

describe('webhook signature edges', () => {
  it('signs whole non-negative unix seconds only', async () => {
    expect(await signWebhook(secret, 0, body)).toBe(`t=0,v1=${v1(secret, 0, body)}`);
    for (const bad of [-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      await expect(signWebhook(secret, bad, body)).rejects.toThrow(new RangeError('timestamp must be whole unix seconds'));
    }
  });

  it('checks against the clock when no `now` is given, with 300 s of tolerance by default', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    expect(await verifyWebhookSignature(body, `t=${nowS},v1=${v1(secret, nowS, body)}`, secret)).toBe(true);
    expect(await verifyWebhookSignature(body, `t=${nowS - 290},v1=${v1(secret, nowS - 290, body)}`, secret)).toBe(true);
    expect(await verifyWebhookSignature(body, `t=${nowS - 400},v1=${v1(secret, nowS - 400, body)}`, secret)).toBe(false);
  });

  it('refuses a non-string body or secret, an empty secret, a non-finite clock or tolerance', async () => {
    const header = `t=${t},v1=${v1(secret, t, '123')}`;
    expect(await verifyWebhookSignature('123', header, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(123 as unknown as string, header, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature('123', header, [secret] as unknown as string, { now: t })).toBe(false);
    expect(await verifyWebhookSignature('123', `t=${t},v1=${v1('', t, '123')}`, '', { now: t })).toBe(false);
    expect(await verifyWebhookSignature('123', header, secret, { now: Number.NaN })).toBe(false);
    expect(await verifyWebhookSignature('123', header, secret, { now: t, toleranceSeconds: Number.POSITIVE_INFINITY })).toBe(false);
    expect(await verifyWebhookSignature('123', header, secret, { now: t, toleranceSeconds: -1 })).toBe(false);
    expect(await verifyWebhookSignature('123', header, secret, { now: t, toleranceSeconds: 0 })).toBe(true);
    expect(await verifyWebhookSignature('123', header, secret, { now: t + 1, toleranceSeconds: 0 })).toBe(false);
  });

  it('parses blanks around parts, skips parts without `=`, takes an upper-case v1', async () => {
    const sig = v1(secret, t, body);
    expect(await verifyWebhookSignature(body, ` t = ${t} , v1 = ${sig} `, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(body, `t=${t},tx,v1=${sig}`, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(body, `t=${t},=x,v1=${sig}`, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(body, `t=${t},v1=${sig.toUpperCase()}`, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(body, `t=${t},v0=${sig}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, undefined as unknown as string, secret, { now: t })).toBe(false);
  });

  it('refuses a malformed or repeated t and malformed v1 values', async () => {
    const sig = v1(secret, t, body);
    expect(await verifyWebhookSignature(body, `t=${t},t=${t},v1=${sig}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=x${t},v1=${sig}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t}x,v1=${sig}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=,v1=${sig}`, secret, { now: t })).toBe(false);
    const big = 1_000_000_000_000; // 13 digits
    expect(await verifyWebhookSignature(body, `t=${big},v1=${v1(secret, big, body)}`, secret, { now: big })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t},v1=x${sig}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t},v1=${sig}0`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t},v1=${sig.slice(0, 63)}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `v1=${sig}`, secret, { now: t })).toBe(false);
    // Without a t there is nothing to check, even a v1 computed over "null.<body>" near the epoch.
    expect(await verifyWebhookSignature(body, `v1=${v1(secret, 'null', body)}`, secret, { now: 100 })).toBe(false);
  });
});
