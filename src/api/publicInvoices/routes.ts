/**
 * An invoice's customer-facing side, public through its unguessable link only (the secret is the
 * credential): `GET /invoice/<secret>` (its hosted page, enhanced by the pay page's script),
 * `GET /invoice/<secret>/pdf`, `GET /invoice/<secret>/qr.svg` (a payment URI's QR code), and
 * `GET /v1/public/invoices/<secret>`, which the page polls. Under the same per-client limits as
 * the claim links' pages and public endpoint (one window each for both kinds of link).
 */
import { readFileSync } from 'node:fs';
import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import type { RouteDeps } from '../routeDeps';
import { projectPath } from '../../lib/projectRoot';
import { findPublicInvoice, getPublicInvoice, invoicePageQrUri, invoicePdf } from '../../services/billing/invoiceDocuments';
import { invoicePdfPath } from '../../services/billing/invoiceLinks';
import { renderInvoicePage } from '../../presenters/invoicePage';
import type { PdfFonts } from '../../presenters/invoicePdf';
import { payPageScript } from '../pages/payPage';
import { noFraming, qrQuery, sendPaymentPage, sendQrCode } from '../pages/pageResponses';

/** `GET /v1/public/invoices/:secret`: mounted with the /v1 public routes. */
export function publicInvoiceRoutes(router: Router<AppState>, deps: RouteDeps) {
  router.get('/public/invoices/:secret', deps.publicClaimLimit, async (ctx: Ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await getPublicInvoice(deps, String(ctx.params.secret));
  });
}

/** DejaVu Sans (the `dejavu-fonts-ttf` package): TrueType, with accented Latin and Cyrillic. */
function dejaVuSans(): PdfFonts {
  const file = (name: string) => readFileSync(projectPath('node_modules', 'dejavu-fonts-ttf', 'ttf', name));
  return { regular: file('DejaVuSans.ttf'), bold: file('DejaVuSans-Bold.ttf') };
}

/** The hosted page, its QR codes and its PDF. */
export function invoicePageRoutes(router: Router<AppState>, deps: RouteDeps) {
  const limit = deps.payPageLimit;
  const script = payPageScript();
  // Read on the first PDF this app makes, then kept with the app (several MB: not for apps that never make one).
  let fonts: PdfFonts | null = null;
  const pdfFonts = () => (fonts ??= dejaVuSans());

  router.get('/invoice/:secret', limit, async (ctx: Ctx) => {
    const secret = String(ctx.params.secret);
    const view = await findPublicInvoice(deps, secret);
    const paths = { api: `/v1/public/invoices/${encodeURIComponent(secret)}`, pdf: invoicePdfPath(secret) };
    sendPaymentPage(ctx, view !== null, renderInvoicePage(view, script, paths), script);
  });

  router.get('/invoice/:secret/qr.svg', limit, async (ctx: Ctx) => {
    const { address, amount } = qrQuery(ctx);
    await sendQrCode(ctx, await invoicePageQrUri(deps, String(ctx.params.secret), address, amount));
  });

  router.get('/invoice/:secret/pdf', limit, async (ctx: Ctx) => {
    const etag = /^"([0-9a-f]{64})"$/.exec(ctx.get('If-None-Match'))?.[1];
    const file = await invoicePdf(deps, String(ctx.params.secret), pdfFonts, etag);
    // Private: the link is the credential, so no shared cache keeps it; revalidated by its ETag.
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.set('ETag', `"${file.key}"`);
    noFraming(ctx);
    if (!file.pdf) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/pdf';
    ctx.set('Content-Disposition', `inline; filename="${file.filename}"`);
    ctx.body = file.pdf;
  });
}
