import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { openapiDocument } from '../openapi/document';
import { CONTENT_SECURITY_POLICY, renderErrors, renderReference } from './render';

const pages: Record<string, () => string> = {
  '/docs': () => renderReference(openapiDocument()),
  '/docs/errors': renderErrors,
};
const rendered = new Map<string, string>();

/** `/docs` and `/docs/errors`: static HTML rendered once from the OpenAPI document, no script. */
export function docsPages(router: Router<AppState>) {
  for (const [path, render] of Object.entries(pages)) {
    router.get(path, (ctx: Ctx) => {
      if (!rendered.has(path)) rendered.set(path, render());
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('X-Frame-Options', 'DENY');
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = rendered.get(path);
    });
  }
}
