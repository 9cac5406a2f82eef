/** @jsxImportSource preact */
/**
 * The finance console's pages: server-rendered JSX (preact-render-to-string escapes every value),
 * tables that work without JavaScript, one stylesheet and one script from /console/assets (no
 * inline script or style; the chart data rides in a non-executable JSON block).
 */
import type { ComponentChildren } from 'preact';
import { JsonBlock, PageMeta, renderDocument } from '../../lib/html';
import type { ConsoleSessionView } from '../../services/console/consoleSessions';
import type { overview, subscriptionLifecycle, subscriptionTable, SubscriptionFilter } from '../../services/console/console';
import type { CollectionsReport, ReceivablesReport } from '../../presenters/reports';
import type { ClaimEvidence } from '../../services/console/consoleClaims';
import type { ConsoleAuditEntryDoc } from '../../models/consoleAuditEntry';
import { SUBSCRIPTION_STATUSES } from '../../models/subscription';
import type { CustomerLabel } from '../../services/console/consoleCustomers';

type Overview = Awaited<ReturnType<typeof overview>>;
type Table = Awaited<ReturnType<typeof subscriptionTable>>;
type Lifecycle = Awaited<ReturnType<typeof subscriptionLifecycle>>;

const NAV: [string, string][] = [
  ['/console', 'Overview'],
  ['/console/customers', 'Customers'],
  ['/console/invoices', 'Invoices'],
  ['/console/payments', 'Payments'],
  ['/console/claims', 'Claims'],
  ['/console/subscriptions', 'Subscriptions'],
  ['/console/receivables', 'Receivables'],
  ['/console/collections', 'Collections'],
];

/** Customers' names by id, looked up once per page (services/console/consoleCustomers.ts customerLabels). */
export type Labels = Map<string, CustomerLabel>;

/** An id to copy: selected whole by one click. */
export const CopyId = ({ id }: { id: string }) => <code class="id">{id}</code>;

/**
 * A customer as every table shows it: name (or email) linking to its page, the email, and the id
 * to copy. Without a label (deleted, or not looked up) the id alone; without an id the account wallet.
 */
/**
 * A table's scrolling box: focusable and named, so a keyboard can scroll a table wider than a
 * phone (axe-core's scrollable-region-focusable), even one without a link in it.
 */
export function TableBox({ label, children }: { label: string; children: ComponentChildren }) {
  return <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>{children}</div>;
}

export function CustomerCell({ id, label }: { id: string | null | undefined; label?: CustomerLabel | null }) {
  if (!id) return <>Account wallet</>;
  if (!label) return <CopyId id={id} />;
  return (
    <span class="customer">
      <a href={`/console/customers/${encodeURIComponent(id)}`}>{label.name ?? label.email ?? id}</a>
      {label.name && label.email ? <span class="email">{` ${label.email}`}</span> : null} <CopyId id={id} />
    </span>
  );
}

/** The hidden CSRF field of every form of a session. */
export const Csrf = ({ token }: { token: string }) => <input type="hidden" name="csrf_token" value={token} />;

function Header({ s, current }: { s: ConsoleSessionView; current?: string }) {
  return (
    <header class="top">
      <span class="brand">Finance console</span>
      <nav>
        {NAV.map(([href, label]) => (href === current ? <a href={href} class="current" aria-current="page">{label}</a> : <a href={href}>{label}</a>))}
      </nav>
      <form method="post" action="/console/scope" id="scope-form">
        <Csrf token={s.csrfToken} />
        <label for="scope">Scope</label>
        <select id="scope" name="scope">
          <option value="production" selected={s.sandbox === null}>Production</option>
          {s.sandboxes.map((name) => (
            <option value={`sandbox:${name}`} selected={s.sandbox === name}>Sandbox: {name}</option>
          ))}
        </select>
        <button type="submit" id="scope-switch">Switch</button>
      </form>
      <form method="post" action="/console/sign-out">
        <Csrf token={s.csrfToken} />
        <span class="notice">{s.email ?? ''}</span>
        <button type="submit" class="link" id="sign-out">Sign out</button>
      </form>
    </header>
  );
}

interface LayoutOptions {
  session?: ConsoleSessionView;
  current?: string;
  scripts?: string[];
}

/** A whole console page as HTML. */
export function layout(title: string, body: ComponentChildren, opts: LayoutOptions = {}): string {
  return renderDocument(
    <html lang="en">
      <head>
        <PageMeta />
        <title>{`${title} · Finance console`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/console/assets/console.css" />
      </head>
      <body>
        {opts.session ? <Header s={opts.session} current={opts.current} /> : null}
        <main>{body}</main>
        {(opts.scripts ?? []).map((src) => (
          <script src={src} defer></script>
        ))}
      </body>
    </html>,
  );
}

export const scopeName = (s: ConsoleSessionView) => (s.sandbox === null ? 'production' : `sandbox ${s.sandbox}`);

export function signInPage(opts: { csrfToken: string; error?: string; notice?: string; email?: string; otpRequired?: boolean }): string {
  return layout(
    'Sign in',
    <form class="signin" method="post" action="/console/sign-in" id="sign-in-form">
      <h1>Finance console</h1>
      {opts.notice ? <p class="notice" id="notice">{opts.notice}</p> : null}
      {opts.error ? <p class="error" id="error" role="alert">{opts.error}</p> : null}
      <Csrf token={opts.csrfToken} />
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required value={opts.email ?? ''} />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      <label for="otp_attempt">Two-factor code{opts.otpRequired ? '' : ' (if enabled)'}</label>
      <input id="otp_attempt" name="otp_attempt" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required={opts.otpRequired} autofocus={opts.otpRequired} />
      <button type="submit" id="sign-in">Sign in</button>
    </form>,
  );
}

function Card({ id, label, value }: { id: string; label: string; value: string }) {
  return (
    <div class="card">
      <div class="label">{label}</div>
      <div class="value" id={id}>{value}</div>
    </div>
  );
}

export function overviewPage(session: ConsoleSessionView, o: Overview): string {
  const body = (
    <>
      <h1>
        Overview <small class="notice">({scopeName(session)}, {o.month}, USD)</small>
      </h1>
      <div class="cards">
        <Card id="fig-mrr" label="MRR" value={o.mrr} />
        <Card id="fig-arr" label="ARR" value={o.arr} />
        <Card id="fig-active" label="Active subscriptions" value={String(o.active_subscriptions)} />
        <Card id="fig-churned" label="Churned this month" value={String(o.churned_this_month)} />
        <Card id="fig-open" label={`Open (${o.open_total.count})`} value={o.open_total.amount} />
        <Card id="fig-overdue" label={`Overdue (${o.overdue_total.count})`} value={o.overdue_total.amount} />
        <Card id="fig-collected" label="Collected this month" value={o.collected_this_month} />
      </div>
      <div class="charts">
        <section class="chart">
          <h2>MRR, 12 months, by movement</h2>
          <div class="canvas-box"><canvas id="chart-mrr" role="img" aria-label="MRR over 12 months stacked by movement"></canvas></div>
          <p><a href="/console/reports/mrr.csv" download>MRR CSV</a></p>
        </section>
        <section class="chart">
          <h2>Receivables aging</h2>
          <div class="canvas-box"><canvas id="chart-aging" role="img" aria-label="Receivables by aging bucket"></canvas></div>
        </section>
        <section class="chart">
          <h2>Collections by currency (USD)</h2>
          <div class="canvas-box"><canvas id="chart-collections" role="img" aria-label="Collections per month by currency"></canvas></div>
        </section>
      </div>
      {o.amount_mismatches.length === 0 ? null : (
        <section id="amount-mismatches">
          <h2>Payments to review: the chain paid another amount</h2>
          <p class="notice">Recorded by hand or from a claim, then found on chain with a different amount. Each stays as recorded, with its allocations: correct it with the customer.</p>
          <TableBox label="Payments to review">
            <table>
              <thead><tr><th>Transaction</th><th>Hash</th><th class="num">Recorded</th><th class="num">On chain</th><th>Detected</th></tr></thead>
              <tbody>
                {o.amount_mismatches.map((x) => (
                  <tr class="flagged">
                    <td>{x.crypto_transaction_id}</td>
                    <td><code>{x.transaction_id}</code></td>
                    <td class="num">{x.recorded_amount} {x.currency}</td>
                    <td class="num">{x.chain_amount} {x.currency}</td>
                    <td>{x.detected_at}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </section>
      )}
      <JsonBlock id="chart-data" data={o.charts} />
    </>
  );
  return layout('Overview', body, { session, current: '/console', scripts: ['/console/assets/chart.umd.min.js', '/console/assets/console.js'] });
}

export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Rows of a table, or one row saying there are none. */
export function rowsOr<T>(items: T[], row: (item: T, i: number) => ComponentChildren, colspan: number, none: string): ComponentChildren {
  return items.length ? items.map(row) : <tr><td colSpan={colspan}>{none}</td></tr>;
}

export function subscriptionsPage(session: ConsoleSessionView, filter: SubscriptionFilter, t: Table): string {
  const f = { status: filter.status, customer: filter.customer, next_from: filter.next_from, next_to: filter.next_to };
  const body = (
    <>
      <h1>Subscriptions <small class="notice">({scopeName(session)})</small></h1>
      <form class="filters" method="get" action="/console/subscriptions">
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {SUBSCRIPTION_STATUSES.map((s) => <option selected={filter.status === s}>{s}</option>)}
          </select>
        </label>
        <label>Customer (id or email)<input name="customer" value={filter.customer ?? ''} /></label>
        <label>Next billing from<input type="date" name="next_from" value={filter.next_from ?? ''} /></label>
        <label>to<input type="date" name="next_to" value={filter.next_to ?? ''} /></label>
        <button type="submit">Filter</button>
      </form>
      <p class="notice" id="sub-count">{`${t.count} subscription${t.count === 1 ? '' : 's'}`}</p>
      <TableBox label="Subscriptions">
        <table id="subscriptions">
          <thead><tr><th>Subscription</th><th>Customer</th><th>Status</th><th class="num">MRR</th><th>Next billing</th><th>Started</th></tr></thead>
          <tbody>
            {rowsOr(t.rows, (r) => (
              <tr>
                <td><a href={`/console/subscriptions/${encodeURIComponent(r.id)}`}>{r.id}</a></td>
                <td><CustomerCell id={r.customer_id} label={r.customer_email ? { id: r.customer_id, name: r.customer_name ?? null, email: r.customer_email } : null} /></td>
                <td>{r.status}</td>
                <td class="num">{r.mrr}</td>
                <td>{r.next_billing_date?.slice(0, 10) ?? '—'}</td>
                <td>{r.start_date?.slice(0, 10) ?? '—'}</td>
              </tr>
            ), 6, 'No subscriptions match.')}
          </tbody>
        </table>
      </TableBox>
      <div class="pager">
        {t.page > 1 ? <a href={`/console/subscriptions${query({ ...f, page: t.page - 1 })}`}>← Newer</a> : null}
        {t.page < t.pages ? <a href={`/console/subscriptions${query({ ...f, page: t.page + 1 })}`}>Older →</a> : null}
        <span class="notice">{`Page ${t.page} of ${Math.max(t.pages, 1)}`}</span>
      </div>
    </>
  );
  return layout('Subscriptions', body, { session, current: '/console/subscriptions' });
}

/** Where an invoice sits on the axis: its billing date (period start), or its due date for one made by hand. */
const invoiceAt = (i: Lifecycle['invoices'][number]) => Date.parse(i.period_start ?? `${i.due_date}T00:00:00Z`);

/** The lifecycle on a time axis, as SVG drawn on the server: phases as bands, then invoices, payments and credits as marks. */
function LifecycleSvg({ l, now }: { l: Lifecycle; now: Date }) {
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
  const f1 = (n: number) => n.toFixed(1);
  const rows = { phases: 30, invoices: 75, payments: 115, credits: 150, axis: 180 };
  const labels = [['Phases', rows.phases], ['Invoices', rows.invoices], ['Payments', rows.payments], ['Credits', rows.credits]] as const;
  const next = l.next_billing_date ? x(Date.parse(l.next_billing_date)) : null;
  return (
    <svg id="lifecycle-axis" viewBox={`0 0 ${W} ${rows.axis + 24}`} role="img" aria-label="Lifecycle on a time axis">
      {labels.map(([name, y]) => <text x="4" y={y + 4}>{name}</text>)}
      {l.phases.map((p, i) => {
        const a = x(Date.parse(p.start_date));
        const b = x(p.end_date ? Date.parse(p.end_date) : l.canceled_at ? Date.parse(l.canceled_at) : max);
        return (
          <>
            <rect class="phase" x={f1(a)} y={rows.phases - 12} width={f1(Math.max(b - a, 2))} height="24" rx="3">
              <title>{`Phase ${i + 1}: ${day(Date.parse(p.start_date))} – ${p.end_date ? day(Date.parse(p.end_date)) : 'open'}`}</title>
            </rect>
            <text x={f1(a + 4)} y={rows.phases + 4}>{`Phase ${i + 1}`}</text>
          </>
        );
      })}
      {l.invoices.map((inv) => {
        const cx = f1(x(invoiceAt(inv)));
        return (
          <>
            <line class="tick" x1={cx} x2={cx} y1={rows.phases + 12} y2={rows.axis} />
            <circle class={`inv-${inv.status}`} cx={cx} cy={rows.invoices} r="6"><title>{`${inv.id}: ${inv.total_amount} USD, ${inv.status}`}</title></circle>
          </>
        );
      })}
      {l.payments.map((p) => {
        const cx = x(Date.parse(p.at));
        return (
          <rect class="payment" x={f1(cx - 5)} y={rows.payments - 5} width="10" height="10">
            <title>{`${p.amount_applied} USD from ${p.amount} ${p.currency} (${p.source})`}</title>
          </rect>
        );
      })}
      {l.credits.map((c) => {
        const cx = x(Date.parse(c.at));
        return (
          <polygon class="credit" points={`${f1(cx)},${rows.credits - 6} ${f1(cx + 6)},${rows.credits + 5} ${f1(cx - 6)},${rows.credits + 5}`}>
            <title>{`${c.amount} USD: ${c.description}`}</title>
          </polygon>
        );
      })}
      {next === null ? null : (
        <line class="next" x1={f1(next)} x2={f1(next)} y1="10" y2={rows.axis}><title>{`Next billing ${day(Date.parse(l.next_billing_date!))}`}</title></line>
      )}
      <line class="axis" x1={L} x2={W - 20} y1={rows.axis} y2={rows.axis} />
      {[0, 1, 2, 3, 4].map((i) => {
        const t = min + ((max - min) * i) / 4;
        return <text x={f1(x(t))} y={rows.axis + 16} text-anchor={i === 0 ? 'start' : i === 4 ? 'end' : 'middle'}>{day(t)}</text>;
      })}
    </svg>
  );
}

export function lifecyclePage(session: ConsoleSessionView, l: Lifecycle, temporalLink: string, now = new Date(), customer: CustomerLabel | null = null): string {
  const body = (
    <>
      <p><a href="/console/subscriptions">← Subscriptions</a></p>
      <h1>Subscription <span id="sub-id">{l.id}</span></h1>
      <p>
        Customer <CustomerCell id={l.customer_id} label={customer} /> · status <strong id="sub-status">{l.status}</strong>
        {l.next_billing_date ? ` · next billing ${l.next_billing_date.slice(0, 10)}` : ''}
        {l.canceled_at ? ` · canceled ${l.canceled_at.slice(0, 10)}` : ''}
        {' · '}
        <a id="temporal-link" href={temporalLink} rel="noopener noreferrer" target="_blank">Workflow in the Temporal UI</a>
      </p>
      <h2>Lifecycle</h2>
      <div class="lifecycle" tabIndex={0} role="region" aria-label="Lifecycle">
        <LifecycleSvg l={l} now={now} />
        <p class="legend">
          <span><i class="inv-paid"></i>Invoice paid</span><span><i class="inv-pending"></i>pending</span><span><i class="inv-overdue"></i>overdue</span>
          <span><i class="payment"></i>Payment</span><span><i class="credit"></i>Proration credit</span><span>Vertical lines: billing dates; dashed: the next one</span>
        </p>
      </div>
      <h2>Phases</h2>
      <TableBox label="Phases">
        <table id="phases">
          <thead><tr><th>#</th><th>Start</th><th>End</th><th>Items</th></tr></thead>
          <tbody>
            {l.phases.map((p, i) => (
              <tr>
                <td>{i + 1}</td>
                <td>{p.start_date}</td>
                <td>{p.end_date ?? 'open'}</td>
                <td>
                  {p.items.map((it, n) => (
                    <>
                      {n > 0 ? <br /> : null}
                      {`${it.product_name} × ${it.quantity} at ${it.price}${it.interval ? ` / ${it.interval_count ?? 1} ${it.interval}` : ' once'}`}
                    </>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      <h2>Invoices</h2>
      <TableBox label="Invoices">
        <table id="invoices">
          <thead><tr><th>Invoice</th><th>Status</th><th>Period</th><th>Due</th><th class="num">Total</th><th class="num">Paid</th></tr></thead>
          <tbody>
            {rowsOr(l.invoices, (i) => (
              <tr>
                <td>{i.id}</td>
                <td class={`status-${i.status}`}>{i.status}</td>
                <td>{`${i.period_start?.slice(0, 10) ?? '—'} – ${i.period_end?.slice(0, 10) ?? '—'}`}</td>
                <td>{i.due_date}</td>
                <td class="num">{i.total_amount}</td>
                <td class="num">{i.amount_paid}</td>
              </tr>
            ), 6, 'None yet.')}
          </tbody>
        </table>
      </TableBox>
      <h2>Payments</h2>
      <TableBox label="Payments">
        <table id="payments">
          <thead><tr><th>Applied at</th><th>Invoice</th><th class="num">USD</th><th>Paid with</th><th>Source</th></tr></thead>
          <tbody>
            {rowsOr(l.payments, (p) => (
              <tr><td>{p.at}</td><td>{p.invoice_id}</td><td class="num">{p.amount_applied}</td><td>{`${p.amount} ${p.currency}`}</td><td>{p.source}</td></tr>
            ), 5, 'None.')}
          </tbody>
        </table>
      </TableBox>
      <h2>Proration credits</h2>
      <TableBox label="Proration credits">
        <table id="credits">
          <thead><tr><th>At</th><th>Invoice</th><th class="num">USD</th><th>Description</th></tr></thead>
          <tbody>
            {rowsOr(l.credits, (c) => <tr><td>{c.at}</td><td>{c.invoice_id}</td><td class="num">{c.amount}</td><td>{c.description}</td></tr>, 4, 'None.')}
          </tbody>
        </table>
      </TableBox>
      <h2>Timeline</h2>
      <TableBox label="Timeline">
        <table id="timeline">
          <thead><tr><th>At</th><th>Step</th><th>Invoice</th><th class="num">Amount</th></tr></thead>
          <tbody>
            {rowsOr(l.steps, (s) => (
              <tr><td>{s.at}</td><td>{s.step}</td><td>{(s as { invoice_id?: string }).invoice_id ?? ''}</td><td class="num">{(s as { amount?: string }).amount ?? ''}</td></tr>
            ), 4, 'No events kept.')}
          </tbody>
        </table>
      </TableBox>
    </>
  );
  return layout(`Subscription ${l.id}`, body, { session, current: '/console/subscriptions' });
}

export function receivablesPage(session: ConsoleSessionView, r: ReceivablesReport, labels: Labels = new Map()): string {
  const body = (
    <>
      <h1>Receivables <small class="notice">({scopeName(session)}, as of {r.as_of})</small></h1>
      <form class="filters" method="get" action="/console/receivables">
        <label>As of<input type="date" name="as_of" value={r.as_of} /></label>
        <button type="submit">Show</button>
        <a id="csv-link" href={`/console/reports/receivables.csv${query({ as_of: r.as_of })}`} download>Download CSV</a>
      </form>
      <div class="cards">
        <Card id="rcv-total" label={`Open (${r.total.count})`} value={r.total.amount} />
        <Card id="rcv-overdue" label={`Overdue (${r.overdue.count})`} value={r.overdue.amount} />
      </div>
      {r.buckets.map((b) => (
        <>
          <h2>{b.label} <small class="notice">{`${b.count} · ${b.amount} USD`}</small></h2>
          <TableBox label={b.label}>
            <table class="bucket" data-bucket={b.bucket}>
              <thead><tr><th>Invoice</th><th>Customer</th><th>Status</th><th>Due</th><th class="num">Days past due</th><th class="num">Total</th><th class="num">Balance</th></tr></thead>
              <tbody>
                {rowsOr(b.invoices, (i) => (
                  <tr>
                    <td><a href={`/console/invoices/${encodeURIComponent(i.id)}`}>{i.id}</a></td><td><CustomerCell id={i.customer_id} label={labels.get(i.customer_id)} /></td><td class={`status-${i.status}`}>{i.status}</td><td>{i.due_date}</td>
                    <td class="num">{i.days_past_due}</td><td class="num">{i.total_amount}</td><td class="num">{i.balance}</td>
                  </tr>
                ), 7, 'None.')}
              </tbody>
            </table>
          </TableBox>
          {b.invoices_truncated ? <p class="notice">Only the oldest 1,000 are listed; the CSV has every invoice.</p> : null}
        </>
      ))}
    </>
  );
  return layout('Receivables', body, { session, current: '/console/receivables' });
}

export function collectionsPage(session: ConsoleSessionView, c: CollectionsReport, labels: Labels = new Map()): string {
  const body = (
    <>
      <h1>Collections <small class="notice">({scopeName(session)}, {c.from} to {c.to})</small></h1>
      <form class="filters" method="get" action="/console/collections">
        <label>From<input name="from" value={c.from} pattern="[0-9]{4}-[0-9]{2}" placeholder="YYYY-MM" /></label>
        <label>To<input name="to" value={c.to} pattern="[0-9]{4}-[0-9]{2}" placeholder="YYYY-MM" /></label>
        <button type="submit">Show</button>
        <a id="csv-link" href={`/console/reports/collections.csv${query({ from: c.from, to: c.to })}`} download>Download CSV</a>
      </form>
      <TableBox label="Collections">
        <table id="collections">
          <thead><tr><th>Month</th><th>Currency</th><th>Source</th><th>Manual</th><th class="num">Payments</th><th class="num">Amount</th><th class="num">USD value</th><th class="num">Allocated</th><th class="num">Unallocated</th></tr></thead>
          <tbody>
            {rowsOr(c.rows, (r) => (
              <tr>
                <td>{r.month}</td><td>{r.currency}</td><td>{r.source}</td><td>{r.manual ? 'manual' : 'on chain'}</td><td class="num">{r.payments}</td>
                <td class="num">{r.amount}</td><td class="num">{r.usd_value}</td><td class="num">{r.allocated_usd}</td><td class="num">{r.unallocated_usd}</td>
              </tr>
            ), 9, 'Nothing collected in these months.')}
          </tbody>
        </table>
      </TableBox>
      <h2>Per month (USD)</h2>
      <TableBox label="Collections per month">
        <table id="collections-months">
          <thead><tr><th>Month</th><th class="num">Payments</th><th class="num">USD</th></tr></thead>
          <tbody>
            {c.months.map((m) => <tr><td>{m.month}</td><td class="num">{m.payments}</td><td class="num">{m.usd_value}</td></tr>)}
          </tbody>
        </table>
      </TableBox>
      <h2>Unallocated credit per customer</h2>
      <TableBox label="Unallocated credit per customer">
        <table id="credit">
          <thead><tr><th>Customer</th><th class="num">Transactions</th><th class="num">Credit (USD)</th></tr></thead>
          <tbody>
            {rowsOr(c.unallocated_credit, (u) => <tr><td><CustomerCell id={u.customer_id} label={u.customer_id ? labels.get(u.customer_id) : null} /></td><td class="num">{u.transactions}</td><td class="num">{u.amount}</td></tr>, 3, 'None.')}
          </tbody>
        </table>
      </TableBox>
    </>
  );
  return layout('Collections', body, { session, current: '/console/collections' });
}

export const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : '—');

const ACTION_WORDS: Record<string, string> = { 'payment_claim.approve': 'approve', 'payment_claim.reject': 'reject', 'invoice.mark_paid': 'mark paid', 'invoice.void': 'void', 'invoice.rotate_links': 'rotate links' };

/** One console action: when, who, what, the outcome, from where. */
export function auditLine(a: ConsoleAuditEntryDoc, withObject: boolean): string {
  const what = `${ACTION_WORDS[a.action] ?? a.action}${withObject ? ` ${a.object_type.replace('_', ' ')} ${a.object_id}` : ''}`;
  const outcome = a.outcome === 'refused' ? `refused: ${a.detail ?? ''}` : a.outcome;
  return `${iso(a.at)}: ${a.user_email ?? `user ${a.user_id}`} - ${what} - ${outcome}${a.reason ? ` (reason: ${a.reason})` : ''} - from ${a.client_address}`;
}

/** The step-up field of an action form: a fresh TOTP code when the user has two-factor on, else the password again. */
export function StepUp({ id, twoFactor }: { id: string; twoFactor: boolean }) {
  return twoFactor ? (
    <>
      <label for={id}>New two-factor code</label>
      <input id={id} name="otp_attempt" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required aria-describedby={`${id}-hint`} />
      <small class="notice" id={`${id}-hint`}>The next code from your authenticator app (not the one you signed in with).</small>
    </>
  ) : (
    <>
      <label for={id}>Your password, again</label>
      <input id={id} name="password" type="password" autocomplete="current-password" required />
    </>
  );
}

/** Approve and reject forms of a pending claim: each asks again (step-up) and needs an explicit confirmation. */
function ClaimActions({ c, session }: { c: ClaimEvidence['claim']; session: ConsoleSessionView }) {
  const id = c._id;
  return (
    <div class="claim-actions">
      <form method="post" action={`/console/claims/${encodeURIComponent(id)}/approval`} class="claim-action approve" id={`approve-${id}`}>
        <fieldset>
          <legend>Approve</legend>
          <Csrf token={session.csrfToken} />
          <StepUp id={`approve-${id}-step-up`} twoFactor={session.twoFactor} />
          <label class="confirm"><input type="checkbox" name="confirm" value="yes" required />{` Record ${c.amount} ${c.currency} as paid by this customer and allocate it`}</label>
          <button type="submit" id={`approve-${id}-submit`}>Approve</button>
        </fieldset>
      </form>
      <form method="post" action={`/console/claims/${encodeURIComponent(id)}/rejection`} class="claim-action reject" id={`reject-${id}`}>
        <fieldset>
          <legend>Reject</legend>
          <Csrf token={session.csrfToken} />
          <label for={`reject-${id}-reason`}>Reason (shown to API clients and in webhooks)</label>
          <textarea id={`reject-${id}-reason`} name="reason" rows={2} maxLength={5000}></textarea>
          <StepUp id={`reject-${id}-step-up`} twoFactor={session.twoFactor} />
          <label class="confirm"><input type="checkbox" name="confirm" value="yes" required /> Reject this claim</label>
          <button type="submit" class="danger" id={`reject-${id}-submit`}>Reject</button>
        </fieldset>
      </form>
    </div>
  );
}

function ClaimRow({ e, session, audit, customer }: { e: ClaimEvidence; session: ConsoleSessionView; audit: ConsoleAuditEntryDoc[]; customer?: CustomerLabel | null }) {
  const c = e.claim;
  const heading = `claim-${c._id}-heading`;
  return (
    <section class="claim" id={`claim-${c._id}`} aria-labelledby={heading}>
      <h2 id={heading}>{`${c.amount} ${c.currency}`} <small class="notice">{`claimed ${iso(c.created_at)}`}</small></h2>
      <dl class="claim-facts">
        <dt>Claim</dt><dd><code>{c._id}</code></dd>
        <dt>Customer</dt><dd><CustomerCell id={c.customer_id} label={customer} /></dd>
        <dt>Sent to</dt><dd><code>{c.to_address}</code></dd>
        <dt>Transaction hash</dt><dd><code class="hash">{c.transaction_id}</code>{e.canonicalHash === null ? <strong class="flag"> (not a valid hash)</strong> : null}</dd>
      </dl>
      <h3>Seen on chain to this address</h3>
      {e.chainPayments.length ? (
        <ul class="evidence chain-payments">
          {e.chainPayments.map((p) => (
            <li class={p.sameHash ? 'match' : undefined}>
              {`${p.amount} ${c.currency}, ${p.status}, block ${p.block_height}, ${iso(p.timestamp)}`}
              {p.sameHash ? <strong> (this hash)</strong> : null}
              {' '}<code class="hash">{p.tx_hash}</code>
            </li>
          ))}
        </ul>
      ) : <p class="notice">No payment to this address seen by the watcher.</p>}
      <h3>Transactions recorded with this hash</h3>
      {e.transactions.length ? (
        <ul class="evidence transactions">
          {e.transactions.map((t) => <li>{`${t._id}: ${t.amount} ${c.currency} to ${t.to_address} (${t.transaction_source}, ${iso(t.timestamp)})`}</li>)}
        </ul>
      ) : <p class="notice">None.</p>}
      <h3>Other claims with this hash</h3>
      {e.otherClaims.length ? (
        <ul class="evidence other-claims">
          {e.otherClaims.map((o) => <li>{`${o._id}: ${o.amount} ${c.currency} to ${o.to_address}, ${o.status} (${iso(o.created_at)})`}</li>)}
        </ul>
      ) : <p class="notice">None.</p>}
      {audit.length ? (
        <>
          <h3>Console actions on this claim</h3>
          <ul class="evidence audit">{audit.map((a) => <li>{auditLine(a, false)}</li>)}</ul>
        </>
      ) : null}
      <ClaimActions c={c} session={session} />
    </section>
  );
}

export interface ClaimsAudit {
  /** The scope's latest console actions, newest first. */
  recent: ConsoleAuditEntryDoc[];
  /** The console actions on the queue's claims. */
  ofClaims: ConsoleAuditEntryDoc[];
}

export function claimsPage(session: ConsoleSessionView, queue: ClaimEvidence[], audit: ClaimsAudit = { recent: [], ofClaims: [] }, opts: { error?: string; notice?: string } = {}, labels: Labels = new Map()): string {
  const body = (
    <>
      <h1>Payment claims <small class="notice">({scopeName(session)}, pending)</small></h1>
      {opts.notice ? <p class="notice" id="notice" role="status">{opts.notice}</p> : null}
      {opts.error ? <p class="error" id="error" role="alert">{opts.error}</p> : null}
      <p class="notice" id="claim-count">{`${queue.length} pending claim${queue.length === 1 ? '' : 's'}, oldest first. Beside each, what this service already stored about its payment.`}</p>
      {queue.map((e) => <ClaimRow e={e} session={session} audit={audit.ofClaims.filter((a) => a.object_id === e.claim._id)} customer={labels.get(e.claim.customer_id)} />)}
      <section id="recent-decisions" aria-labelledby="recent-decisions-heading">
        <h2 id="recent-decisions-heading">Recent decisions</h2>
        {audit.recent.length ? (
          <ul class="evidence audit">{audit.recent.map((a) => <li>{auditLine(a, true)}</li>)}</ul>
        ) : <p class="notice">None yet.</p>}
      </section>
    </>
  );
  return layout('Payment claims', body, { session, current: '/console/claims' });
}

export function errorPage(status: number, message: string, session?: ConsoleSessionView): string {
  return layout(
    `Error ${status}`,
    <>
      <h1>{status}</h1>
      <p class="error" id="error">{message}</p>
      <p><a href="/console">Back to the overview</a></p>
    </>,
    { session },
  );
}
