/**
 * `/console`: the finance console. Read pages on the report services and of customers, invoices
 * and payments; the writes are its own session's (sign-in, scope switch, sign-out), the claims
 * queue's approve and reject, and an invoice's mark paid and void, each a form with a CSRF token.
 * The money-moving ones also ask again (step-up: a fresh TOTP code, or the password when
 * two-factor is off), throttled like a sign-in, and are audited.
 *
 * The session cookie is httpOnly, SameSite=Strict, path /console, Secure when PUBLIC_URL is
 * https (written by hand: Koa refuses a Secure cookie on a plain connection, which is what a TLS
 * proxy in front hands us). Sign-in is throttled together with POST /v1/auth; a browser that
 * signed in before keeps a signed device cookie, so others' failures on its email do not slow it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectPath, resolvePackage } from '../../lib/projectRoot';
import type Router from '@koa/router';
import type { Next } from 'koa';
import type { AppState, Ctx } from '../context';
import type { RouteDeps } from '../routeDeps';
import { ApiError, AuthFlowError } from '../../lib/errors';
import { isDatabaseUnavailable } from '../../models/errors';
import { throttledSignIn } from '../auth/routes';
import { loginEmail, verifyStepUp } from '../../services/accounts/accounts';
import { DEVICE_COOKIE_TTL_SECONDS, deviceCookie, deviceOf } from '../../cryptography/deviceCookie';
import { consoleDeviceKey, ConsoleSessionView, csrfMatches, newSecret, resolveSession, sessionScope, signIn, signOut, switchScope } from '../../services/console/consoleSessions';
import { overview, subscriptionLifecycle, subscriptionTable } from '../../services/console/console';
import { collections, mrr, receivables } from '../../services/reports/reports';
import { collectionsCsv, mrrCsv, presentCollections, presentMrrReport, presentReceivables, receivablesCsv } from '../../presenters/reports';
import { workflowIds } from '../../temporal/workflowIds';
import { monthRangeQuery, receivablesQuery } from '../reports/schema';
import { sendCsv } from '../reports/routes';
import { pendingClaimsWithEvidence } from '../../services/console/consoleClaims';
import { actOnInvoice, rotateLinksOf, auditEntriesOf, ClaimDecision, ConsoleActor, decideClaim, InvoiceAction, recentAuditEntries } from '../../services/console/consoleAudit';
import { customerLabels, customerPage as customerPageData, customerTable } from '../../services/console/consoleCustomers';
import { InvoiceFilter, invoicePage as invoicePageData, invoiceTable } from '../../services/console/consoleInvoices';
import { paymentPage as paymentPageData, paymentTable } from '../../services/console/consolePayments';
import { claimsPage, collectionsPage, errorPage, lifecyclePage, overviewPage, receivablesPage, signInPage, subscriptionsPage } from './views';
import { customerPage, customersPage, invoiceActionPage, invoicePage, invoicesPage, paymentPage, paymentsPage } from './dailyViews';

export const SESSION_COOKIE = 'console_session';
const SIGN_IN_CSRF_COOKIE = 'console_csrf';
export const DEVICE_COOKIE = 'console_device';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

// From the project's root, not __dirname: the same on Node and Deno (src/lib/projectRoot.ts).
const ASSET_DIR = projectPath('src', 'api', 'console', 'assets');
// Chart.js from npm, served by us (no third-party host): its UMD build.
const CHART_JS = path.join(path.dirname(resolvePackage('chart.js')), 'chart.umd.min.js');
const ASSETS: Record<string, { file: string; type: string }> = {
  'console.css': { file: path.join(ASSET_DIR, 'console.css'), type: 'text/css; charset=utf-8' },
  'console.js': { file: path.join(ASSET_DIR, 'console.js'), type: 'text/javascript; charset=utf-8' },
  'chart.umd.min.js': { file: CHART_JS, type: 'text/javascript; charset=utf-8' },
};
const assetCache = new Map<string, Buffer>();

type ConsoleState = AppState & { session?: ConsoleSessionView };
type CCtx = Ctx & { state: ConsoleState };

/**
 * `maxAgeSeconds` null: a browser-session cookie. The session cookie is one: the server decides
 * expiry, so the browser still sends an expired session's cookie and the console can say the
 * session ended (and the cookie goes when the browser closes).
 */
function setCookie(ctx: Ctx, name: string, value: string, maxAgeSeconds: number | null, secure: boolean) {
  const parts = [`${name}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict'];
  if (maxAgeSeconds !== null) parts.push(`Max-Age=${maxAgeSeconds}`);
  if (secure) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

/** A urlencoded form body, at most 8 KiB (the app's body parser reads JSON only). */
async function readForm(ctx: Ctx): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw ApiError.invalid('Expected a form', null);
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > 8192) throw new ApiError(413, 'invalid_request_error', 'parameter_invalid', 'Form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** `?page=`: 1 when missing or not a number, within 1 to 1,000,000. */
const pageParam = (q: Record<string, unknown>) => Math.min(Math.max(Number.parseInt(String(q.page ?? '1'), 10) || 1, 1), 1_000_000);
/** A query parameter as one string of at most 200 characters (a repeated one: the first), or undefined when empty. */
const textParam = (v: unknown): string | undefined => {
  const s = (Array.isArray(v) ? v[0] : v) as string | undefined;
  return typeof s === 'string' && s.trim() ? s.slice(0, 200) : undefined;
};
const idParam = (ctx: Ctx) => String(ctx.params.id ?? '').slice(0, 100);

function html(ctx: Ctx, status: number, body: string) {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

export function consolePages(router: Router<AppState>, deps: RouteDeps) {
  const { config, signIn: signInGuard, consoleClock } = deps;
  const secure = config.publicUrl.startsWith('https:');
  const ttl = config.consoleSessionTtlSeconds;

  /** Headers of every console answer; errors rendered as pages, not JSON. */
  const shell = async (ctx: CCtx, next: Next) => {
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
    try {
      await next();
    } catch (err) {
      const e = err instanceof ApiError ? err : isDatabaseUnavailable(err) ? ApiError.databaseUnavailable() : null;
      if (!e) throw err;
      if (e.headers) ctx.set(e.headers);
      html(ctx, e.status, errorPage(e.status, e.message, ctx.state.session));
    }
  };

  /** A signed-in session, or a redirect to the sign-in page (saying so when the session ended). */
  const signedIn = async (ctx: CCtx, next: Next) => {
    const cookie = ctx.cookies.get(SESSION_COOKIE);
    const session = await resolveSession(cookie, consoleClock());
    if (!session) {
      if (cookie) setCookie(ctx, SESSION_COOKIE, '', 0, secure);
      ctx.status = 303;
      ctx.redirect(`/console/sign-in${cookie ? '?expired=1' : ''}`);
      return;
    }
    ctx.state.session = session;
    await next();
  };

  /** Every POST of a session carries its CSRF token; a missing or wrong one changes nothing (403). */
  const csrf = async (ctx: CCtx, next: Next) => {
    const form = await readForm(ctx);
    if (!csrfMatches(ctx.state.session!.csrfToken, form.get('csrf_token'))) {
      html(ctx, 403, errorPage(403, 'The form has expired or did not come from this console; reload the page and try again.', ctx.state.session));
      return;
    }
    (ctx.state as ConsoleState & { form?: URLSearchParams }).form = form;
    await next();
  };
  const formOf = (ctx: CCtx) => (ctx.state as ConsoleState & { form: URLSearchParams }).form;

  router.get('/console/assets/:file', async (ctx: Ctx) => {
    const asset = ASSETS[ctx.params.file ?? ''];
    if (!asset) throw ApiError.notFound('No such asset');
    if (!assetCache.has(asset.file)) assetCache.set(asset.file, readFileSync(asset.file));
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = assetCache.get(asset.file);
  });

  const signInForm = (ctx: CCtx, status: number, opts: { error?: string; notice?: string; email?: string; otpRequired?: boolean } = {}) => {
    // Before a session exists, the form's token is double-submitted: a cookie and a hidden field.
    const token = newSecret();
    setCookie(ctx, SIGN_IN_CSRF_COOKIE, token, 3600, secure);
    html(ctx, status, signInPage({ csrfToken: token, ...opts }));
  };

  router.get('/console/sign-in', shell, async (ctx: CCtx) => {
    if (await resolveSession(ctx.cookies.get(SESSION_COOKIE), consoleClock())) return ctx.redirect('/console');
    signInForm(ctx, 200, ctx.query.expired ? { notice: 'Your session has ended. Please sign in again.' } : ctx.query.signed_out ? { notice: 'Signed out.' } : {});
  });

  router.post('/console/sign-in', shell, async (ctx: CCtx) => {
    const form = await readForm(ctx);
    const expected = ctx.cookies.get(SIGN_IN_CSRF_COOKIE);
    const email = form.get('email') ?? '';
    if (!expected || !csrfMatches(expected, form.get('csrf_token'))) {
      return signInForm(ctx, 403, { error: 'The form has expired; please try again.', email });
    }
    const key = loginEmail(email);
    const deviceKey = await consoleDeviceKey(config.claimChallengeHmacKey);
    const device = deviceOf(deviceKey, ctx.cookies.get(DEVICE_COOKIE), key, Date.now());
    const otp = form.get('otp_attempt') ?? '';
    let secret: string;
    try {
      // 429 and 503 come back as AuthFlowErrors with Retry-After set, counted in /metrics like POST /v1/auth's.
      secret = await throttledSignIn(ctx, signInGuard, { ip: ctx.ip, email: key, device }, () =>
        signIn({ email, password: form.get('password') ?? '', ...(otp ? { otp_attempt: otp } : {}) }, ttl, consoleClock),
      );
    } catch (err) {
      if (!(err instanceof AuthFlowError)) throw err;
      if (err.message === 'otp_attempt_required') return signInForm(ctx, 401, { error: 'Enter the code from your authenticator app.', email, otpRequired: true });
      return signInForm(ctx, err.status, { error: err.message, email, otpRequired: err.message.includes('two-factor') });
    }
    setCookie(ctx, SIGN_IN_CSRF_COOKIE, '', 0, secure);
    setCookie(ctx, SESSION_COOKIE, secret, null, secure);
    setCookie(ctx, DEVICE_COOKIE, deviceCookie(deviceKey, key, Date.now()), DEVICE_COOKIE_TTL_SECONDS, secure);
    ctx.status = 303;
    ctx.redirect('/console');
  });

  router.post('/console/sign-out', shell, signedIn, csrf, async (ctx: CCtx) => {
    await signOut(ctx.state.session!);
    setCookie(ctx, SESSION_COOKIE, '', 0, secure);
    ctx.status = 303;
    ctx.redirect('/console/sign-in?signed_out=1');
  });

  router.post('/console/scope', shell, signedIn, csrf, async (ctx: CCtx) => {
    const value = formOf(ctx).get('scope') ?? '';
    const sandbox = value === 'production' ? null : value.startsWith('sandbox:') ? value.slice('sandbox:'.length) : undefined;
    if (sandbox === undefined || !(await switchScope(ctx.state.session!, sandbox))) throw ApiError.invalid('Unknown scope', 'scope');
    ctx.status = 303;
    ctx.redirect('/console');
  });

  router.get('/console', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    html(ctx, 200, overviewPage(s, await overview(sessionScope(s))));
  });

  router.get('/console/subscriptions', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const q = ctx.query as Record<string, string | undefined>;
    const page = Math.min(Math.max(Number.parseInt(q.page ?? '1', 10) || 1, 1), 1_000_000);
    const filter = { status: q.status || undefined, customer: q.customer || undefined, next_from: q.next_from || undefined, next_to: q.next_to || undefined, page };
    html(ctx, 200, subscriptionsPage(s, filter, await subscriptionTable(sessionScope(s), filter)));
  });

  router.get('/console/subscriptions/:id', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const l = await subscriptionLifecycle(sessionScope(s), String(ctx.params.id ?? '').slice(0, 100));
    const link = `${config.temporalUiUrl}/namespaces/${encodeURIComponent(config.temporal.namespace)}/workflows/${encodeURIComponent(workflowIds.subscription(l.id))}`;
    const labels = await customerLabels(sessionScope(s), [l.customer_id]);
    html(ctx, 200, lifecyclePage(s, l, link, new Date(), labels.get(l.customer_id) ?? null));
  });

  router.get('/console/receivables', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const { asOf, aging } = await receivables(sessionScope(s), receivablesQuery(ctx.query));
    const report = presentReceivables(asOf, aging);
    const labels = await customerLabels(sessionScope(s), report.buckets.flatMap((b) => b.invoices.map((i) => i.customer_id)));
    html(ctx, 200, receivablesPage(s, report, labels));
  });

  router.get('/console/collections', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const { from, to, result } = await collections(sessionScope(s), monthRangeQuery(ctx.query));
    const report = presentCollections(from, to, result);
    const labels = await customerLabels(sessionScope(s), report.unallocated_credit.map((u) => u.customer_id));
    html(ctx, 200, collectionsPage(s, report, labels));
  });

  const claimsQueue = async (ctx: CCtx, status: number, opts: { error?: string; notice?: string } = {}) => {
    const s = ctx.state.session!;
    const scope = sessionScope(s);
    const queue = await pendingClaimsWithEvidence(scope);
    const [recent, ofClaims, labels] = await Promise.all([
      recentAuditEntries(scope),
      auditEntriesOf(scope, queue.map((e) => e.claim._id)),
      customerLabels(scope, queue.map((e) => e.claim.customer_id)),
    ]);
    html(ctx, status, claimsPage(s, queue, { recent, ofClaims }, opts, labels));
  };

  /**
   * The step-up of a money-moving action, through the sign-in throttle (a wrong code or password
   * counts as a failed sign-in of the user's email from this client and browser): null when it
   * passed, else the refusal (401; 429 or 503 with Retry-After set).
   */
  const stepUp = async (ctx: CCtx, form: URLSearchParams): Promise<AuthFlowError | null> => {
    const s = ctx.state.session!;
    const key = loginEmail(s.email ?? '');
    const device = deviceOf(await consoleDeviceKey(config.claimChallengeHmacKey), ctx.cookies.get(DEVICE_COOKIE), key, Date.now());
    try {
      await throttledSignIn(ctx, signInGuard, { ip: ctx.ip, email: key, device }, () =>
        verifyStepUp(s.userId, { password: form.get('password') ?? '', otp_attempt: form.get('otp_attempt') ?? '' }),
      );
      return null;
    } catch (err) {
      if (!(err instanceof AuthFlowError)) throw err;
      return err;
    }
  };
  const actorOf = (ctx: CCtx): ConsoleActor => {
    const s = ctx.state.session!;
    return { scope: sessionScope(s), userId: s.userId, email: s.email, clientAddress: ctx.ip };
  };

  const DECIDED: Record<string, string> = { approved: 'The claim was approved.', rejected: 'The claim was rejected.' };
  router.get('/console/claims', shell, signedIn, async (ctx: CCtx) => {
    await claimsQueue(ctx, 200, { notice: DECIDED[String(ctx.query.decided ?? '')] });
  });

  /**
   * Approve or reject: CSRF (middleware), the confirmation box, the step-up through the sign-in
   * throttle (a wrong code or password counts as a failed sign-in of the user's email from this
   * client and browser), then the same service as the API. Refusals re-render the queue with the
   * message; nothing changed.
   */
  const decision = (toDecision: (form: URLSearchParams) => ClaimDecision) => async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const form = formOf(ctx);
    const id = String(ctx.params.id ?? '').slice(0, 100);
    if (form.get('confirm') !== 'yes') return claimsQueue(ctx, 422, { error: 'Tick the confirmation box to confirm the decision; nothing was changed.' });
    if ((form.get('reason') ?? '').length > 5000) return claimsQueue(ctx, 422, { error: 'The reason is too long (at most 5000 characters); nothing was changed.' });
    const refused = await stepUp(ctx, form);
    if (refused) return claimsQueue(ctx, refused.status, { error: `${refused.message}; nothing was changed.` });
    const d = toDecision(form);
    try {
      await decideClaim(deps, actorOf(ctx), id, d);
    } catch (err) {
      // A claim of another account or scope is a 404 page, as for any object; a refusal (not pending, already recorded) is shown on the queue.
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      return claimsQueue(ctx, 422, { error: `${err.message}; nothing was changed.` });
    }
    ctx.status = 303;
    ctx.redirect(`/console/claims?decided=${d.action === 'approve' ? 'approved' : 'rejected'}`);
  };
  router.post('/console/claims/:id/approval', shell, signedIn, csrf, decision(() => ({ action: 'approve' })));
  router.post('/console/claims/:id/rejection', shell, signedIn, csrf, decision((form) => ({ action: 'reject', reason: form.get('reason') ?? undefined })));

  // Customers, invoices, payments: read pages; a refused filter or search is shown on its page.
  router.get('/console/customers', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const filter = { q: textParam(ctx.query.q), page: pageParam(ctx.query) };
    try {
      html(ctx, 200, customersPage(s, await customerTable(sessionScope(s), filter)));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      html(ctx, 422, customersPage(s, { rows: [], pagination: { page: filter.page, pages: 0, count: 0 }, query: filter.q ?? '' }, { error: err.message }));
    }
  });

  router.get('/console/customers/:id', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    html(ctx, 200, customerPage(s, await customerPageData(sessionScope(s), idParam(ctx))));
  });

  router.get('/console/invoices', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const q = ctx.query;
    const filter: InvoiceFilter = { status: textParam(q.status), customer: textParam(q.customer), due_from: textParam(q.due_from), due_to: textParam(q.due_to), page: pageParam(q) };
    try {
      html(ctx, 200, invoicesPage(s, filter, await invoiceTable(sessionScope(s), filter)));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      html(ctx, 422, invoicesPage(s, filter, { rows: [], page: filter.page, count: 0, pages: 0, more: false }, { error: err.message }));
    }
  });

  const DONE: Record<string, string> = { paid: 'The invoice was marked paid.', voided: 'The invoice was voided.', rotated: 'New links made; the old ones no longer open.' };
  router.get('/console/invoices/:id', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    html(ctx, 200, invoicePage(s, await invoicePageData(deps, sessionScope(s), idParam(ctx)), { notice: DONE[String(ctx.query.done ?? '')] }));
  });

  /** New links for the hosted page and PDF (the old ones end): CSRF and a ticked box, audited; it moves no money, so no step-up. */
  router.post('/console/invoices/:id/links', shell, signedIn, csrf, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    const id = idParam(ctx);
    if (formOf(ctx).get('confirm') !== 'yes') {
      return html(ctx, 422, invoicePage(s, await invoicePageData(deps, sessionScope(s), id), { error: 'Tick the box to rotate the links; nothing was changed.' }));
    }
    await rotateLinksOf(deps, actorOf(ctx), id);
    ctx.status = 303;
    ctx.redirect(`/console/invoices/${encodeURIComponent(id)}?done=rotated`);
  });

  /**
   * Mark paid and void: a confirmation page saying what will happen (GET), then its form (POST):
   * CSRF (middleware), the ticked box, the step-up, then the API's PATCH service. A refusal
   * re-renders the confirmation with the message and its status; nothing changed.
   */
  const ACTION_PATHS: [InvoiceAction, string, string][] = [['mark_paid', 'mark-paid', 'paid'], ['void', 'void', 'voided']];
  for (const [action, path, done] of ACTION_PATHS) {
    router.get(`/console/invoices/:id/${path}`, shell, signedIn, async (ctx: CCtx) => {
      const s = ctx.state.session!;
      html(ctx, 200, invoiceActionPage(s, await invoicePageData(deps, sessionScope(s), idParam(ctx)), action));
    });
    router.post(`/console/invoices/:id/${path}`, shell, signedIn, csrf, async (ctx: CCtx) => {
      const s = ctx.state.session!;
      const form = formOf(ctx);
      const id = idParam(ctx);
      const again = async (status: number, error: string) => html(ctx, status, invoiceActionPage(s, await invoicePageData(deps, sessionScope(s), id), action, { error: `${error}; nothing was changed.` }));
      if (form.get('confirm') !== 'yes') return again(422, 'Tick the confirmation box to confirm');
      const refused = await stepUp(ctx, form);
      if (refused) return again(refused.status, refused.message);
      try {
        await actOnInvoice(deps, actorOf(ctx), id, action);
      } catch (err) {
        // Another account's invoice is a 404 page; the API's refusals (422, 409) are shown on the confirmation.
        if (!(err instanceof ApiError) || err.status === 404 || err.status >= 500) throw err;
        return again(err.status, err.message);
      }
      ctx.status = 303;
      ctx.redirect(`/console/invoices/${encodeURIComponent(id)}?done=${done}`);
    });
  }

  router.get('/console/payments', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    html(ctx, 200, paymentsPage(s, await paymentTable(sessionScope(s), pageParam(ctx.query))));
  });

  router.get('/console/payments/:id', shell, signedIn, async (ctx: CCtx) => {
    const s = ctx.state.session!;
    html(ctx, 200, paymentPage(s, await paymentPageData(sessionScope(s), idParam(ctx))));
  });

  // CSV downloads: the same services and CSV presenters as /v1/reports, with the session's scope.
  router.get('/console/reports/mrr.csv', shell, signedIn, async (ctx: CCtx) => {
    const { from, to, months } = await mrr(sessionScope(ctx.state.session!), monthRangeQuery(ctx.query));
    sendCsv(ctx, `mrr-${from}-${to}`, mrrCsv(presentMrrReport(from, to, months)));
  });
  router.get('/console/reports/receivables.csv', shell, signedIn, async (ctx: CCtx) => {
    const { asOf, aging } = await receivables(sessionScope(ctx.state.session!), receivablesQuery(ctx.query));
    sendCsv(ctx, `receivables-${asOf}`, receivablesCsv(asOf, aging));
  });
  router.get('/console/reports/collections.csv', shell, signedIn, async (ctx: CCtx) => {
    const { from, to, result } = await collections(sessionScope(ctx.state.session!), monthRangeQuery(ctx.query));
    sendCsv(ctx, `collections-${from}-${to}`, collectionsCsv(presentCollections(from, to, result)));
  });
}
