/**
 * How the customer's pages answer (a claim link's pay page, an invoice's hosted page): HTML that
 * no one may frame or cache, under the payment pages' CSP, and SVG QR codes of payment URIs.
 */
import type { Ctx } from '../context';
import { payPageContentSecurityPolicy, PayPageScript } from '../../presenters/paymentPage';
import { qrCodeSvg } from '../../presenters/qrCode';

export function noFraming(ctx: Ctx) {
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
}

/** A payment page: `found` false is a 404 whose page explains what is wrong (the status tells crawlers and tools). */
export function sendPaymentPage(ctx: Ctx, found: boolean, html: string, script: PayPageScript) {
  ctx.status = found ? 200 : 404;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  noFraming(ctx);
  ctx.set('Content-Security-Policy', payPageContentSecurityPolicy(`${ctx.protocol}://${ctx.host}`, script));
  ctx.body = html;
}

/** The QR code of a payment URI the page's service checked. */
export async function sendQrCode(ctx: Ctx, uri: string) {
  ctx.type = 'image/svg+xml';
  ctx.set('Cache-Control', 'private, max-age=300');
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
  noFraming(ctx);
  ctx.body = await qrCodeSvg(uri);
}

/** `address` and `amount` of a QR code's query. */
export function qrQuery(ctx: Ctx): { address: string; amount: string | null } {
  const { address, amount } = ctx.query;
  return { address: typeof address === 'string' ? address : '', amount: typeof amount === 'string' ? amount : null };
}
