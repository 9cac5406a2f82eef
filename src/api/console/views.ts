/**
 * The finance console's pages: server-rendered HTML, every value escaped, tables that work
 * without JavaScript, one stylesheet and one script from /console/assets (no inline script or
 * style; the chart data rides in a non-executable JSON block).
 */
import { escapeHtml as h } from '../docs/render';
import type { ConsoleSessionView } from '../../services/consoleSessions';
import type { overview, subscriptionLifecycle, subscriptionTable, SubscriptionFilter } from '../../services/console';
import type { CollectionsReport, ReceivablesReport } from '../../presenters/reports';
import { SUBSCRIPTION_STATUSES } from '../../models/subscription';

type Overview = Awaited<ReturnType<typeof overview>>;
type Table = Awaited<ReturnType<typeof subscriptionTable>>;
type Lifecycle = Awaited<ReturnType<typeof subscriptionLifecycle>>;

const NAV: [string, string][] = [
  ['/console', 'Overview'],
  ['/console/subscriptions', 'Subscriptions'],
  ['/console/receivables', 'Receivables'],
  ['/console/collections', 'Collections'],
];

function layout(title: string, body: string, opts: { session?: ConsoleSessionView; current?: string; scripts?: string[] } = {}): string {
  const s = opts.session;
  const header = s
    ? `<header class="top">
  <span class="brand">Finance console</span>
  <nav>${NAV.map(([href, label]) => `<a href="${href}"${href === opts.current ? ' class="current" aria-current="page"' : ''}>${label}</a>`).join('')}</nav>
  <form method="post" action="/console/scope" id="scope-form">
    <input type="hidden" name="csrf_token" value="${h(s.csrfToken)}">
    <label for="scope">Scope</label>
    <select id="scope" name="scope">
      <option value="production"${s.sandbox === null ? ' selected' : ''}>Production</option>
      ${s.sandboxes.map((name) => `<option value="sandbox:${h(name)}"${s.sandbox === name ? ' selected' : ''}>Sandbox: ${h(name)}</option>`).join('')}
    </select>
    <button type="submit" id="scope-switch">Switch</button>
  </form>
  <form method="post" action="/console/sign-out">
    <input type="hidden" name="csrf_token" value="${h(s.csrfToken)}">
    <span class="notice">${h(s.email ?? '')}</span>
    <button type="submit" class="link" id="sign-out">Sign out</button>
  </form>
</header>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${h(title)} · Finance console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/console.css">
</head>
<body>
${header}
<main>
${body}
</main>
${(opts.scripts ?? []).map((src) => `<script src="${h(src)}" defer></script>`).join('\n')}
</body>
</html>`;
}

const scopeName = (s: ConsoleSessionView) => (s.sandbox === null ? 'production' : `sandbox ${s.sandbox}`);
const usd = (amount: string) => `${h(amount)}`;

export function signInPage(opts: { csrfToken: string; error?: string; notice?: string; email?: string; otpRequired?: boolean }): string {
  return layout(
    'Sign in',
    `<form class="signin" method="post" action="/console/sign-in" id="sign-in-form">
  <h1>Finance console</h1>
  ${opts.notice ? `<p class="notice" id="notice">${h(opts.notice)}</p>` : ''}
  ${opts.error ? `<p class="error" id="error" role="alert">${h(opts.error)}</p>` : ''}
  <input type="hidden" name="csrf_token" value="${h(opts.csrfToken)}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${h(opts.email ?? '')}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <label for="otp_attempt">Two-factor code${opts.otpRequired ? '' : ' (if enabled)'}</label>
  <input id="otp_attempt" name="otp_attempt" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}"${opts.otpRequired ? ' required autofocus' : ''}>
  <button type="submit" id="sign-in">Sign in</button>
</form>`,
  );
}

function card(id: string, label: string, value: string): string {
  return `<div class="card"><div class="label">${h(label)}</div><div class="value" id="${id}">${h(value)}</div></div>`;
}

/** JSON for a `<script type="application/json">` block: `<` escaped so the data cannot close the element. */
function jsonBlock(id: string, data: unknown): string {
  return `<script type="application/json" id="${id}">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>`;
}

export function overviewPage(session: ConsoleSessionView, o: Overview): string {
  const body = `<h1>Overview <small class="notice">(${h(scopeName(session))}, ${h(o.month)}, USD)</small></h1>
<div class="cards">
  ${card('fig-mrr', 'MRR', o.mrr)}
  ${card('fig-arr', 'ARR', o.arr)}
  ${card('fig-active', 'Active subscriptions', String(o.active_subscriptions))}
  ${card('fig-churned', 'Churned this month', String(o.churned_this_month))}
  ${card('fig-open', `Open (${o.open_total.count})`, o.open_total.amount)}
  ${card('fig-overdue', `Overdue (${o.overdue_total.count})`, o.overdue_total.amount)}
  ${card('fig-collected', 'Collected this month', o.collected_this_month)}
</div>
<div class="charts">
  <section class="chart"><h2>MRR, 12 months, by movement</h2><div class="canvas-box"><canvas id="chart-mrr" role="img" aria-label="MRR over 12 months stacked by movement"></canvas></div>
    <p><a href="/console/reports/mrr.csv" download>MRR CSV</a></p></section>
  <section class="chart"><h2>Receivables aging</h2><div class="canvas-box"><canvas id="chart-aging" role="img" aria-label="Receivables by aging bucket"></canvas></div></section>
  <section class="chart"><h2>Collections by currency (USD)</h2><div class="canvas-box"><canvas id="chart-collections" role="img" aria-label="Collections per month by currency"></canvas></div></section>
</div>
${o.amount_mismatches.length === 0 ? '' : `<section id="amount-mismatches"><h2>Payments to review: the chain paid another amount</h2>
<p class="notice">Recorded by hand or from a claim, then found on chain with a different amount. Each stays as recorded, with its allocations: correct it with the customer.</p>
<div class="table-wrap"><table><thead><tr><th>Transaction</th><th>Hash</th><th class="num">Recorded</th><th class="num">On chain</th><th>Detected</th></tr></thead><tbody>
${o.amount_mismatches.map((x) => `<tr class="flagged"><td>${h(x.crypto_transaction_id)}</td><td><code>${h(x.transaction_id)}</code></td><td class="num">${h(x.recorded_amount)} ${h(x.currency)}</td><td class="num">${h(x.chain_amount)} ${h(x.currency)}</td><td>${h(x.detected_at)}</td></tr>`).join('')}
</tbody></table></div></section>`}
${jsonBlock('chart-data', o.charts)}`;
  return layout('Overview', body, { session, current: '/console', scripts: ['/console/assets/chart.umd.min.js', '/console/assets/console.js'] });
}

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function subscriptionsPage(session: ConsoleSessionView, filter: SubscriptionFilter, t: Table): string {
  const f = { status: filter.status, customer: filter.customer, next_from: filter.next_from, next_to: filter.next_to };
  const rows = t.rows
    .map(
      (r) => `<tr>
  <td><a href="/console/subscriptions/${encodeURIComponent(r.id)}">${h(r.id)}</a></td>
  <td>${h(r.customer_email ?? r.customer_id)}</td>
  <td>${h(r.status)}</td>
  <td class="num">${usd(r.mrr)}</td>
  <td>${h(r.next_billing_date?.slice(0, 10) ?? '—')}</td>
  <td>${h(r.start_date?.slice(0, 10) ?? '—')}</td>
</tr>`,
    )
    .join('');
  const body = `<h1>Subscriptions <small class="notice">(${h(scopeName(session))})</small></h1>
<form class="filters" method="get" action="/console/subscriptions">
  <label>Status<select name="status"><option value="">Any</option>${SUBSCRIPTION_STATUSES.map((s) => `<option${filter.status === s ? ' selected' : ''}>${s}</option>`).join('')}</select></label>
  <label>Customer (id or email)<input name="customer" value="${h(filter.customer ?? '')}"></label>
  <label>Next billing from<input type="date" name="next_from" value="${h(filter.next_from ?? '')}"></label>
  <label>to<input type="date" name="next_to" value="${h(filter.next_to ?? '')}"></label>
  <button type="submit">Filter</button>
</form>
<p class="notice" id="sub-count">${t.count} subscription${t.count === 1 ? '' : 's'}</p>
<div class="table-wrap"><table id="subscriptions">
<thead><tr><th>Subscription</th><th>Customer</th><th>Status</th><th class="num">MRR</th><th>Next billing</th><th>Started</th></tr></thead>
<tbody>${rows || '<tr><td colspan="6">No subscriptions match.</td></tr>'}</tbody>
</table></div>
<div class="pager">
${t.page > 1 ? `<a href="/console/subscriptions${query({ ...f, page: t.page - 1 })}">← Newer</a>` : ''}
${t.page < t.pages ? `<a href="/console/subscriptions${query({ ...f, page: t.page + 1 })}">Older →</a>` : ''}
<span class="notice">Page ${t.page} of ${Math.max(t.pages, 1)}</span>
</div>`;
  return layout('Subscriptions', body, { session, current: '/console/subscriptions' });
}

/** Where an invoice sits on the axis: its billing date (period start), or its due date for one made by hand. */
const invoiceAt = (i: Lifecycle['invoices'][number]) => Date.parse(i.period_start ?? `${i.due_date}T00:00:00Z`);

/** The lifecycle on a time axis, as SVG drawn on the server: phases as bands, then invoices, payments and credits as marks. */
function lifecycleSvg(l: Lifecycle, now: Date): string {
  const times = [
    ...l.phases.flatMap((p) => [Date.parse(p.start_date), p.end_date ? Date.parse(p.end_date) : NaN]),
    ...l.invoices.map((i) => invoiceAt(i)),
    ...l.payments.map((p) => Date.parse(p.at)),
    l.next_billing_date ? Date.parse(l.next_billing_date) : NaN,
    l.canceled_at ? Date.parse(l.canceled_at) : NaN,
    now.getTime(),
  ].filter((t) => Number.isFinite(t));
  const min = Math.min(...times);
  const max = Math.max(...times) + 86_400_000;
  const W = 900;
  const L = 90;
  const x = (t: number) => L + ((t - min) / (max - min || 1)) * (W - L - 20);
  const day = (t: number) => new Date(t).toISOString().slice(0, 10);
  const parts: string[] = [];
  const rows = { phases: 30, invoices: 75, payments: 115, credits: 150, axis: 180 };
  for (const [name, y] of [['Phases', rows.phases], ['Invoices', rows.invoices], ['Payments', rows.payments], ['Credits', rows.credits]] as const) {
    parts.push(`<text x="4" y="${y + 4}">${name}</text>`);
  }
  l.phases.forEach((p, i) => {
    const a = x(Date.parse(p.start_date));
    const b = x(p.end_date ? Date.parse(p.end_date) : l.canceled_at ? Date.parse(l.canceled_at) : max);
    parts.push(`<rect class="phase" x="${a.toFixed(1)}" y="${rows.phases - 12}" width="${Math.max(b - a, 2).toFixed(1)}" height="24" rx="3"><title>Phase ${i + 1}: ${h(day(Date.parse(p.start_date)))} – ${h(p.end_date ? day(Date.parse(p.end_date)) : 'open')}</title></rect>`);
    parts.push(`<text x="${(a + 4).toFixed(1)}" y="${rows.phases + 4}">Phase ${i + 1}</text>`);
  });
  for (const inv of l.invoices) {
    const cx = x(invoiceAt(inv));
    parts.push(`<line class="tick" x1="${cx.toFixed(1)}" x2="${cx.toFixed(1)}" y1="${rows.phases + 12}" y2="${rows.axis}"/>`);
    parts.push(`<circle class="inv-${h(inv.status)}" cx="${cx.toFixed(1)}" cy="${rows.invoices}" r="6"><title>${h(inv.id)}: ${h(inv.total_amount)} USD, ${h(inv.status)}</title></circle>`);
  }
  for (const p of l.payments) {
    const cx = x(Date.parse(p.at));
    parts.push(`<rect class="payment" x="${(cx - 5).toFixed(1)}" y="${rows.payments - 5}" width="10" height="10"><title>${h(p.amount_applied)} USD from ${h(p.amount)} ${h(p.currency)} (${h(p.source)})</title></rect>`);
  }
  for (const c of l.credits) {
    const cx = x(Date.parse(c.at));
    parts.push(`<polygon class="credit" points="${cx.toFixed(1)},${rows.credits - 6} ${(cx + 6).toFixed(1)},${rows.credits + 5} ${(cx - 6).toFixed(1)},${rows.credits + 5}"><title>${h(c.amount)} USD: ${h(c.description)}</title></polygon>`);
  }
  if (l.next_billing_date) {
    const nx = x(Date.parse(l.next_billing_date));
    parts.push(`<line class="next" x1="${nx.toFixed(1)}" x2="${nx.toFixed(1)}" y1="10" y2="${rows.axis}"><title>Next billing ${h(day(Date.parse(l.next_billing_date)))}</title></line>`);
  }
  parts.push(`<line class="axis" x1="${L}" x2="${W - 20}" y1="${rows.axis}" y2="${rows.axis}"/>`);
  for (let i = 0; i <= 4; i++) {
    const t = min + ((max - min) * i) / 4;
    const anchor = i === 0 ? 'start' : i === 4 ? 'end' : 'middle';
    parts.push(`<text x="${x(t).toFixed(1)}" y="${rows.axis + 16}" text-anchor="${anchor}">${day(t)}</text>`);
  }
  return `<svg id="lifecycle-axis" viewBox="0 0 ${W} ${rows.axis + 24}" role="img" aria-label="Lifecycle on a time axis">${parts.join('')}</svg>`;
}

export function lifecyclePage(session: ConsoleSessionView, l: Lifecycle, temporalLink: string, now = new Date()): string {
  const steps = l.steps
    .map((s) => `<tr><td>${h(s.at)}</td><td>${h(s.step)}</td><td>${h((s as { invoice_id?: string }).invoice_id ?? '')}</td><td class="num">${h((s as { amount?: string }).amount ?? '')}</td></tr>`)
    .join('');
  const invoices = l.invoices
    .map((i) => `<tr><td>${h(i.id)}</td><td class="status-${h(i.status)}">${h(i.status)}</td><td>${h(i.period_start?.slice(0, 10) ?? '—')} – ${h(i.period_end?.slice(0, 10) ?? '—')}</td><td>${h(i.due_date)}</td><td class="num">${h(i.total_amount)}</td><td class="num">${h(i.amount_paid)}</td></tr>`)
    .join('');
  const payments = l.payments
    .map((p) => `<tr><td>${h(p.at)}</td><td>${h(p.invoice_id)}</td><td class="num">${h(p.amount_applied)}</td><td>${h(p.amount)} ${h(p.currency)}</td><td>${h(p.source)}</td></tr>`)
    .join('');
  const credits = l.credits.map((c) => `<tr><td>${h(c.at)}</td><td>${h(c.invoice_id)}</td><td class="num">${h(c.amount)}</td><td>${h(c.description)}</td></tr>`).join('');
  const body = `<p><a href="/console/subscriptions">← Subscriptions</a></p>
<h1>Subscription <span id="sub-id">${h(l.id)}</span></h1>
<p>Customer ${h(l.customer_id)} · status <strong id="sub-status">${h(l.status)}</strong>${l.next_billing_date ? ` · next billing ${h(l.next_billing_date.slice(0, 10))}` : ''}${l.canceled_at ? ` · canceled ${h(l.canceled_at.slice(0, 10))}` : ''}
 · <a id="temporal-link" href="${h(temporalLink)}" rel="noopener noreferrer" target="_blank">Workflow in the Temporal UI</a></p>
<h2>Lifecycle</h2>
<div class="lifecycle">${lifecycleSvg(l, now)}
<p class="legend"><span><i class="inv-paid"></i>Invoice paid</span><span><i class="inv-pending"></i>pending</span><span><i class="inv-overdue"></i>overdue</span><span><i class="payment"></i>Payment</span><span><i class="credit"></i>Proration credit</span><span>Vertical lines: billing dates; dashed: the next one</span></p></div>
<h2>Phases</h2>
<div class="table-wrap"><table id="phases"><thead><tr><th>#</th><th>Start</th><th>End</th><th>Items</th></tr></thead><tbody>
${l.phases.map((p, i) => `<tr><td>${i + 1}</td><td>${h(p.start_date)}</td><td>${h(p.end_date ?? 'open')}</td><td>${p.items.map((it) => `${h(it.product_name)} × ${h(it.quantity)} at ${h(it.price)}${it.interval ? ` / ${h(it.interval_count ?? 1)} ${h(it.interval)}` : ' once'}`).join('<br>')}</td></tr>`).join('')}
</tbody></table></div>
<h2>Invoices</h2>
<div class="table-wrap"><table id="invoices"><thead><tr><th>Invoice</th><th>Status</th><th>Period</th><th>Due</th><th class="num">Total</th><th class="num">Paid</th></tr></thead><tbody>${invoices || '<tr><td colspan="6">None yet.</td></tr>'}</tbody></table></div>
<h2>Payments</h2>
<div class="table-wrap"><table id="payments"><thead><tr><th>Applied at</th><th>Invoice</th><th class="num">USD</th><th>Paid with</th><th>Source</th></tr></thead><tbody>${payments || '<tr><td colspan="5">None.</td></tr>'}</tbody></table></div>
<h2>Proration credits</h2>
<div class="table-wrap"><table id="credits"><thead><tr><th>At</th><th>Invoice</th><th class="num">USD</th><th>Description</th></tr></thead><tbody>${credits || '<tr><td colspan="4">None.</td></tr>'}</tbody></table></div>
<h2>Timeline</h2>
<div class="table-wrap"><table id="timeline"><thead><tr><th>At</th><th>Step</th><th>Invoice</th><th class="num">Amount</th></tr></thead><tbody>${steps || '<tr><td colspan="4">No events kept.</td></tr>'}</tbody></table></div>`;
  return layout(`Subscription ${l.id}`, body, { session, current: '/console/subscriptions' });
}

export function receivablesPage(session: ConsoleSessionView, r: ReceivablesReport): string {
  const buckets = r.buckets
    .map(
      (b) => `<h2>${h(b.label)} <small class="notice">${b.count} · ${h(b.amount)} USD</small></h2>
<div class="table-wrap"><table class="bucket" data-bucket="${h(b.bucket)}"><thead><tr><th>Invoice</th><th>Customer</th><th>Status</th><th>Due</th><th class="num">Days past due</th><th class="num">Total</th><th class="num">Balance</th></tr></thead><tbody>
${b.invoices.map((i) => `<tr><td>${h(i.id)}</td><td>${h(i.customer_id)}</td><td class="status-${h(i.status)}">${h(i.status)}</td><td>${h(i.due_date)}</td><td class="num">${i.days_past_due}</td><td class="num">${h(i.total_amount)}</td><td class="num">${h(i.balance)}</td></tr>`).join('') || '<tr><td colspan="7">None.</td></tr>'}
</tbody></table></div>${b.invoices_truncated ? '<p class="notice">Only the oldest 1,000 are listed; the CSV has every invoice.</p>' : ''}`,
    )
    .join('\n');
  const body = `<h1>Receivables <small class="notice">(${h(scopeName(session))}, as of ${h(r.as_of)})</small></h1>
<form class="filters" method="get" action="/console/receivables"><label>As of<input type="date" name="as_of" value="${h(r.as_of)}"></label><button type="submit">Show</button>
<a id="csv-link" href="/console/reports/receivables.csv${query({ as_of: r.as_of })}" download>Download CSV</a></form>
<div class="cards">${card('rcv-total', `Open (${r.total.count})`, r.total.amount)}${card('rcv-overdue', `Overdue (${r.overdue.count})`, r.overdue.amount)}</div>
${buckets}`;
  return layout('Receivables', body, { session, current: '/console/receivables' });
}

export function collectionsPage(session: ConsoleSessionView, c: CollectionsReport): string {
  const body = `<h1>Collections <small class="notice">(${h(scopeName(session))}, ${h(c.from)} to ${h(c.to)})</small></h1>
<form class="filters" method="get" action="/console/collections">
<label>From<input name="from" value="${h(c.from)}" pattern="[0-9]{4}-[0-9]{2}" placeholder="YYYY-MM"></label>
<label>To<input name="to" value="${h(c.to)}" pattern="[0-9]{4}-[0-9]{2}" placeholder="YYYY-MM"></label>
<button type="submit">Show</button>
<a id="csv-link" href="/console/reports/collections.csv${query({ from: c.from, to: c.to })}" download>Download CSV</a></form>
<div class="table-wrap"><table id="collections"><thead><tr><th>Month</th><th>Currency</th><th>Source</th><th>Manual</th><th class="num">Payments</th><th class="num">Amount</th><th class="num">USD value</th><th class="num">Allocated</th><th class="num">Unallocated</th></tr></thead><tbody>
${c.rows.map((r) => `<tr><td>${h(r.month)}</td><td>${h(r.currency)}</td><td>${h(r.source)}</td><td>${r.manual ? 'manual' : 'on chain'}</td><td class="num">${r.payments}</td><td class="num">${h(r.amount)}</td><td class="num">${h(r.usd_value)}</td><td class="num">${h(r.allocated_usd)}</td><td class="num">${h(r.unallocated_usd)}</td></tr>`).join('') || '<tr><td colspan="9">Nothing collected in these months.</td></tr>'}
</tbody></table></div>
<h2>Per month (USD)</h2>
<div class="table-wrap"><table id="collections-months"><thead><tr><th>Month</th><th class="num">Payments</th><th class="num">USD</th></tr></thead><tbody>
${c.months.map((m) => `<tr><td>${h(m.month)}</td><td class="num">${m.payments}</td><td class="num">${h(m.usd_value)}</td></tr>`).join('')}
</tbody></table></div>
<h2>Unallocated credit per customer</h2>
<div class="table-wrap"><table id="credit"><thead><tr><th>Customer</th><th class="num">Transactions</th><th class="num">Credit (USD)</th></tr></thead><tbody>
${c.unallocated_credit.map((u) => `<tr><td>${h(u.customer_id ?? 'Account wallet')}</td><td class="num">${u.transactions}</td><td class="num">${h(u.amount)}</td></tr>`).join('') || '<tr><td colspan="3">None.</td></tr>'}
</tbody></table></div>`;
  return layout('Collections', body, { session, current: '/console/collections' });
}

export function errorPage(status: number, message: string, session?: ConsoleSessionView): string {
  return layout(`Error ${status}`, `<h1>${status}</h1><p class="error" id="error">${h(message)}</p><p><a href="/console">Back to the overview</a></p>`, { session });
}
