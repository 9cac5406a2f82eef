import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { openapiDocument } from './document';

let body: string | null = null;

/** `GET /v1/openapi.json` (and /api/v1): the OpenAPI 3.1 document, without a token. */
export function openapiRoutes(router: Router<AppState>) {
  router.get('/openapi.json', (ctx: Ctx) => {
    body ??= JSON.stringify(openapiDocument());
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = body;
  });
}
