/**
 * `GET /pay/<secret>`: the customer's payment page, rendered on the server
 * (src/presenters/payPage.tsx) and enhanced by one script file, `GET /pay/assets/payPage.<hash>.js`,
 * the only script its CSP allows. `GET /pay/<secret>/qr.svg` draws the QR code of a payment URI.
 */
import { readFileSync } from 'node:fs';
import { projectPath } from '../../lib/projectRoot';
import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import type { RouteDeps } from '../routeDeps';
import { findPublicPaymentClaimLink, payPageQrUri } from '../../services/crypto/publicPaymentClaimLinks';
import { PayPageScript, PayPageView, renderPayPage, scriptIntegrity } from '../../presenters/payPage';
import { qrQuery, sendPaymentPage, sendQrCode } from './pageResponses';

/** The script's text and where it is served: the name carries its hash, so it can be cached for good. */
export function payPageScript(source = readFileSync(projectPath('src', 'api', 'pages', 'assets', 'payPage.js'), 'utf8')): PayPageScript & { source: string } {
  const integrity = scriptIntegrity(source);
  const tag = Buffer.from(integrity.slice('sha256-'.length), 'base64').toString('hex').slice(0, 12);
  return { source, integrity, path: `/pay/assets/payPage.${tag}.js` };
}

// Each load looks a secret up: the same per-IP rate as the public claim routes it calls.
export function payPageRoutes(router: Router<AppState>, deps: RouteDeps) {
  const limit = deps.payPageLimit;
  const script = payPageScript();

  router.get('/pay/assets/:file', (ctx: Ctx) => {
    if (`/pay/assets/${ctx.params.file}` !== script.path) return; // falls through to 404
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = script.source;
  });

  router.get('/pay/:secret', limit, async (ctx: Ctx) => {
    const view: PayPageView = await findPublicPaymentClaimLink(deps, String(ctx.params.secret));
    sendPaymentPage(ctx, view !== null, renderPayPage(view, script, `/v1/public/payment_claim_links/${encodeURIComponent(String(ctx.params.secret))}`), script);
  });

  router.get('/pay/:secret/qr.svg', limit, async (ctx: Ctx) => {
    const { address, amount } = qrQuery(ctx);
    await sendQrCode(ctx, await payPageQrUri(String(ctx.params.secret), address, amount));
  });
}
