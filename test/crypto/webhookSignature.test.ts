import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { newSigningSecret, signWebhook, verifyWebhookSignature, SIGNING_SECRET_FORMAT } from '../../src/cryptography/webhookSignature';

const independent = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

describe('webhook signatures', () => {
  it('match an independent HMAC-SHA256 over "<t>.<body>" keyed with the whole secret', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.integer({ min: 1, max: 4_000_000_000 }), async (body, t) => {
        const secret = newSigningSecret();
        expect(await signWebhook(secret, t, body)).toBe(`t=${t},v1=${independent(secret, t, body)}`);
      }),
      { numRuns: 200 },
    );
  });

  it('verify within tolerance only, against the right secret and body', async () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ id: 'evt_1', event: 'customer.created' });
    const t = 1_800_000_000;
    const header = await signWebhook(secret, t, body);
    expect(await verifyWebhookSignature(body, header, secret, { now: t + 299 })).toBe(true);
    expect(await verifyWebhookSignature(body, header, secret, { now: t - 300 })).toBe(true);
    expect(await verifyWebhookSignature(body, header, secret, { now: t + 301 })).toBe(false);
    expect(await verifyWebhookSignature(body + ' ', header, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, header, newSigningSecret(), { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, header, secret.replace('whsec_', ''), { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `v1=${independent(secret, t, body)}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, 'garbage', secret, { now: t })).toBe(false);
    // A rotated secret can be sent alongside: any matching v1 passes.
    expect(await verifyWebhookSignature(body, `t=${t},v1=${'0'.repeat(64)},v1=${independent(secret, t, body)}`, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(body, header, secret, { now: t, toleranceSeconds: 10 })).toBe(true);
  });

  it('makes secrets of the documented format', () => {
    const secrets = new Set(Array.from({ length: 100 }, newSigningSecret));
    expect(secrets.size).toBe(100);
    for (const s of secrets) expect(s).toMatch(SIGNING_SECRET_FORMAT);
  });
  it('property: a signed body verifies within tolerance; any change to body, time or secret does not', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.integer({ min: 1_000_000_000, max: 3_000_000_000 }), fc.integer({ min: -300, max: 300 }), fc.string({ minLength: 1 }), async (body, t, skew, extra) => {
        const secret = newSigningSecret();
        const header = await signWebhook(secret, t, body);
        expect(await verifyWebhookSignature(body, header, secret, { now: t + skew })).toBe(true);
        expect(await verifyWebhookSignature(body + extra, header, secret, { now: t })).toBe(false);
        expect(await verifyWebhookSignature(body, header, secret, { now: t + 301 + Math.abs(skew) })).toBe(false);
        expect(await verifyWebhookSignature(body, header.replace(`t=${t}`, `t=${t + 1}`), secret, { now: t })).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('parses tolerantly but refuses ambiguous or malformed headers', async () => {
    const secret = newSigningSecret();
    const body = '{"a":1}';
    const t = 1_800_000_000;
    const v1 = independent(secret, t, body);
    expect(await verifyWebhookSignature(body, ` t=${t} , v1=${v1} `, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(body, `v1=${v1},t=${t}`, secret, { now: t })).toBe(true);
    expect(await verifyWebhookSignature(body, `t=${t},v0=${v1}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t},t=${t},v1=${v1}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t}.5,v1=${v1}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=-${t},v1=${v1}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t},v1=${v1.slice(1)}`, secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, '', secret, { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t},v1=${v1}`, '', { now: t })).toBe(false);
    expect(await verifyWebhookSignature(body, `t=${t},v1=${v1}`, secret, { now: t, toleranceSeconds: -1 })).toBe(false);
    // Default clock: a fresh signature verifies without passing `now`.
    const now = Math.floor(Date.now() / 1000);
    expect(await verifyWebhookSignature(body, await signWebhook(secret, now, body), secret)).toBe(true);
  });

  it('signs only whole unix seconds', async () => {
    await expect(signWebhook(newSigningSecret(), 1.5, 'x')).rejects.toThrow(RangeError);
    await expect(signWebhook(newSigningSecret(), -1, 'x')).rejects.toThrow(RangeError);
  });
});
