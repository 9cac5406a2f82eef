/** @jsxImportSource preact */
/**
 * The console's pages for the daily work: customers (list with search, one customer), invoices
 * (list with filters, one invoice with its actions and their confirmation), payments (list, one
 * payment's allocation). Server-rendered JSX like the rest (every value escaped), no script.
 */
import type { ComponentChildren } from 'preact';
import type { ConsoleSessionView } from '../../services/console/consoleSessions';
import type { customerPage as customerPageData, CustomerRow } from '../../services/console/consoleCustomers';
import type { InvoiceFilter, InvoicePage, invoicePage as invoicePageData } from '../../services/console/consoleInvoices';
import type { PaymentRow, paymentPage as paymentPageData } from '../../services/console/consolePayments';
import type { InvoiceAction } from '../../services/console/consoleAudit';
import type { Pagination } from '../../lib/pagination';
import { INVOICE_STATUSES } from '../../models/invoice';
import { auditLine, CopyId, Csrf, CustomerCell, layout, query, rowsOr, scopeName, StepUp, TableBox } from './views';

type CustomerData = Awaited<ReturnType<typeof customerPageData>>;
type InvoiceData = Awaited<ReturnType<typeof invoicePageData>>;
type PaymentData = Awaited<ReturnType<typeof paymentPageData>>;

export interface Messages {
  error?: string;
  notice?: string;
}

function Flash({ m }: { m: Messages }) {
  return (
    <>
      {m.notice ? <p class="notice" id="notice" role="status">{m.notice}</p> : null}
      {m.error ? <p class="error" id="error" role="alert">{m.error}</p> : null}
    </>
  );
}

/** Newer / older links and where we are; `pages` null when the total is not known (a filtered walk). */
function Pager({ base, params, page, pages, more }: { base: string; params: Record<string, string | undefined>; page: number; pages: number | null; more: boolean }) {
  return (
    <div class="pager">
      {page > 1 ? <a href={`${base}${query({ ...params, page: page - 1 })}`} rel="prev">← Newer</a> : null}
      {more ? <a href={`${base}${query({ ...params, page: page + 1 })}`} rel="next">Older →</a> : null}
      <span class="notice">{pages === null ? `Page ${page}` : `Page ${page} of ${Math.max(pages, 1)}`}</span>
    </div>
  );
}

const invoiceLink = (id: string) => <a href={`/console/invoices/${encodeURIComponent(id)}`}>{id}</a>;
const paymentLink = (id: string) => <a href={`/console/payments/${encodeURIComponent(id)}`}>{id}</a>;

export function customersPage(session: ConsoleSessionView, t: { rows: CustomerRow[]; pagination: Pagination; query: string }, m: Messages = {}): string {
  const p = t.pagination;
  const body = (
    <>
      <h1>Customers <small class="notice">({scopeName(session)})</small></h1>
      <Flash m={m} />
      <form class="filters" method="get" action="/console/customers" role="search">
        <label>Name or email<input name="q" type="search" value={t.query} maxLength={200} /></label>
        <button type="submit" id="customer-search">Search</button>
      </form>
      <p class="notice" id="customer-count">{`${p.count} customer${p.count === 1 ? '' : 's'}${t.query ? ' found' : ''}`}</p>
      <TableBox label="Customers">
        <table id="customers">
          <thead><tr><th>Name</th><th>Email</th><th>Id</th><th>Created</th></tr></thead>
          <tbody>
            {rowsOr(t.rows, (c) => (
              <tr>
                <td><a href={`/console/customers/${encodeURIComponent(c.id)}`}>{c.name ?? c.email}</a></td>
                <td>{c.email}</td>
                <td><CopyId id={c.id} /></td>
                <td>{c.created_at.slice(0, 10)}</td>
              </tr>
            ), 4, t.query ? 'No customer matches.' : 'No customers yet.')}
          </tbody>
        </table>
      </TableBox>
      <Pager base="/console/customers" params={{ q: t.query || undefined }} page={p.page} pages={p.pages} more={p.page < p.pages} />
    </>
  );
  return layout('Customers', body, { session, current: '/console/customers' });
}

export function customerPage(session: ConsoleSessionView, d: CustomerData): string {
  const c = d.customer;
  const body = (
    <>
      <p><a href="/console/customers">← Customers</a></p>
      <h1 id="customer-name">{c.name ?? c.email}</h1>
      <dl class="claim-facts">
        <dt>Email</dt><dd id="customer-email">{c.email}</dd>
        <dt>Customer id</dt><dd><CopyId id={c.id} /></dd>
        <dt>Created</dt><dd>{c.created_at}</dd>
      </dl>
      <div class="cards">
        <div class="card"><div class="label">{`Open invoices (${d.open_invoices.length})`}</div><div class="value" id="customer-balance">{d.balance}</div></div>
        <div class="card"><div class="label">Credit on payments</div><div class="value" id="customer-credit">{d.credit}</div></div>
      </div>
      <h2>Open invoices</h2>
      <p><a href={`/console/invoices${query({ customer: c.id })}`}>All invoices of this customer</a></p>
      <TableBox label="Open invoices">
        <table id="open-invoices">
          <thead><tr><th>Invoice</th><th>Status</th><th>Due</th><th class="num">Total</th><th class="num">Paid</th><th class="num">Balance</th></tr></thead>
          <tbody>
            {rowsOr(d.open_invoices, (i) => (
              <tr><td>{invoiceLink(i.id)}</td><td class={`status-${i.status}`}>{i.status}</td><td>{i.due_date}</td><td class="num">{i.total_amount}</td><td class="num">{i.amount_paid}</td><td class="num">{i.balance}</td></tr>
            ), 6, 'None.')}
          </tbody>
        </table>
      </TableBox>
      <h2>Wallets and addresses</h2>
      {d.wallets.length ? (
        d.wallets.map((w) => (
          <section class="wallet" aria-label={`Wallet ${w.id}`}>
            <p>Wallet <CopyId id={w.id} /></p>
            {w.addresses.length ? (
              <ul class="evidence addresses">
                {w.addresses.map((a) => (
                  <li>
                    {`${a.currency} `}<code class="hash">{a.address}</code>{' '}
                    <a href={a.explorer.url} rel="noopener noreferrer" target="_blank">{`on ${a.explorer.name}`}</a>{' '}<CopyId id={a.id} />
                  </li>
                ))}
              </ul>
            ) : <p class="notice">No address yet.</p>}
          </section>
        ))
      ) : <p class="notice">No wallet.</p>}
      <h2>Subscriptions</h2>
      <TableBox label="Subscriptions">
        <table id="customer-subscriptions">
          <thead><tr><th>Subscription</th><th>Status</th><th>Next billing</th><th>Created</th></tr></thead>
          <tbody>
            {rowsOr(d.subscriptions, (s) => (
              <tr><td><a href={`/console/subscriptions/${encodeURIComponent(s.id)}`}>{s.id}</a></td><td>{s.status}</td><td>{s.next_billing_date?.slice(0, 10) ?? '—'}</td><td>{s.created_at.slice(0, 10)}</td></tr>
            ), 4, 'None.')}
          </tbody>
        </table>
      </TableBox>
      <h2>Payments</h2>
      <TableBox label="Payments">
        <table id="customer-payments">
          <thead><tr><th>Payment</th><th>At</th><th class="num">Amount</th><th class="num">USD</th><th class="num">Credit left</th><th>Source</th><th>Invoices</th></tr></thead>
          <tbody>
            {rowsOr(d.payments, (t) => (
              <tr>
                <td>{paymentLink(t.id)}</td><td>{t.timestamp}</td><td class="num">{`${t.amount} ${t.currency}`}</td><td class="num">{t.usd_value ?? '—'}</td>
                <td class="num">{t.unallocated_amount ?? 'not allocated yet'}</td><td>{t.source}</td>
                <td>{t.invoices.map((id, n) => <>{n > 0 ? ', ' : ''}{invoiceLink(id)}</>)}</td>
              </tr>
            ), 7, 'None.')}
          </tbody>
        </table>
      </TableBox>
    </>
  );
  return layout(`Customer ${c.name ?? c.email ?? c.id}`, body, { session, current: '/console/customers' });
}

export function invoicesPage(session: ConsoleSessionView, filter: InvoiceFilter, t: InvoicePage, m: Messages = {}): string {
  const params = { status: filter.status, customer: filter.customer, due_from: filter.due_from, due_to: filter.due_to };
  const body = (
    <>
      <h1>Invoices <small class="notice">({scopeName(session)})</small></h1>
      <Flash m={m} />
      <form class="filters" method="get" action="/console/invoices">
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {INVOICE_STATUSES.map((s) => <option selected={filter.status === s}>{s}</option>)}
          </select>
        </label>
        <label>Customer (id, name or email)<input name="customer" value={filter.customer ?? ''} maxLength={200} /></label>
        <label>Due from<input type="date" name="due_from" value={filter.due_from ?? ''} /></label>
        <label>to<input type="date" name="due_to" value={filter.due_to ?? ''} /></label>
        <button type="submit" id="invoice-filter">Filter</button>
      </form>
      <p class="notice" id="invoice-count">{t.count === null ? `Page ${t.page}, newest first` : `${t.count} invoice${t.count === 1 ? '' : 's'}`}</p>
      <TableBox label="Invoices">
        <table id="invoices">
          <thead><tr><th>Invoice</th><th>Customer</th><th>Status</th><th>Due</th><th class="num">Total</th><th class="num">Paid</th><th class="num">Balance</th></tr></thead>
          <tbody>
            {rowsOr(t.rows, (i) => (
              <tr>
                <td>{invoiceLink(i.id)}</td><td><CustomerCell id={i.customer_id} label={i.customer} /></td><td class={`status-${i.status}`}>{i.status}</td><td>{i.due_date}</td>
                <td class="num">{i.total_amount}</td><td class="num">{i.amount_paid}</td><td class="num">{i.balance}</td>
              </tr>
            ), 7, 'No invoices match.')}
          </tbody>
        </table>
      </TableBox>
      <Pager base="/console/invoices" params={params} page={t.page} pages={t.pages} more={t.more} />
    </>
  );
  return layout('Invoices', body, { session, current: '/console/invoices' });
}

/** What each action does, said on its confirmation. */
const ACTIONS: Record<InvoiceAction, { path: string; title: string; button: string; effect: (d: InvoiceData) => string[] }> = {
  mark_paid: {
    path: 'mark-paid',
    title: 'Mark paid',
    button: 'Mark paid',
    effect: (d) => [
      `The invoice's status becomes paid; ${d.amount_due} USD still due is treated as settled outside this service (no payment is recorded, amount paid stays ${d.invoice.amount_paid}).`,
      'The events invoice.updated and invoice.paid are sent to your webhook endpoints, as PATCH /v1/invoices/:id with status paid sends them.',
      'The invoice leaves the receivables; it counts in collections as marked paid.',
    ],
  },
  void: {
    path: 'void',
    title: 'Void',
    button: 'Void the invoice',
    effect: (d) => [
      `The invoice's status becomes canceled (void); the customer no longer owes its ${d.amount_due} USD, and it can never change status again.`,
      `${d.invoice.amount_paid === '0.00' ? 'Nothing was paid on it.' : `What was already paid (${d.invoice.amount_paid} USD) stays applied to it.`}`,
      'The event invoice.updated is sent to your webhook endpoints, as PATCH /v1/invoices/:id with status canceled sends it.',
    ],
  },
};

function InvoiceFacts({ d }: { d: InvoiceData }) {
  const i = d.invoice;
  return (
    <dl class="claim-facts">
      <dt>Invoice id</dt><dd><CopyId id={i.id} /></dd>
      <dt>Customer</dt><dd id="invoice-customer"><CustomerCell id={i.customer_id} label={d.customer} /></dd>
      <dt>Status</dt><dd id="invoice-status" class={`status-${i.status}`}>{i.status}</dd>
      <dt>Due</dt><dd>{i.due_date}</dd>
      <dt>Total</dt><dd id="invoice-total">{`${i.total_amount} USD`}</dd>
      <dt>Paid</dt><dd id="invoice-paid">{`${i.amount_paid} USD`}</dd>
      <dt>Amount due</dt><dd id="invoice-due">{`${d.amount_due} USD`}</dd>
      {d.overpaid ? <><dt>Paid beyond the total</dt><dd>{`${d.overpaid} USD`}</dd></> : null}
      {i.subscription_id ? <><dt>Subscription</dt><dd><a href={`/console/subscriptions/${encodeURIComponent(i.subscription_id)}`}>{i.subscription_id}</a></dd></> : null}
    </dl>
  );
}

export function invoicePage(session: ConsoleSessionView, d: InvoiceData, m: Messages = {}): string {
  const i = d.invoice;
  const open = i.status === 'pending' || i.status === 'overdue';
  const body = (
    <>
      <p><a href="/console/invoices">← Invoices</a></p>
      <h1>Invoice <span id="invoice-id">{i.id}</span></h1>
      <Flash m={m} />
      <InvoiceFacts d={d} />
      {d.hosted_invoice_url || d.invoice_pdf ? (
        <section id="invoice-documents" aria-labelledby="invoice-documents-heading">
          <h2 id="invoice-documents-heading">For the customer</h2>
          <ul class="evidence">
            {d.hosted_invoice_url ? <li><a id="hosted-invoice-link" href={d.hosted_invoice_url} rel="noopener noreferrer" target="_blank">Hosted invoice page</a> <code class="hash">{d.hosted_invoice_url}</code></li> : null}
            {d.invoice_pdf ? <li><a id="invoice-pdf-link" href={d.invoice_pdf} rel="noopener noreferrer" target="_blank">Invoice PDF</a></li> : null}
          </ul>
          <form method="post" action={`/console/invoices/${encodeURIComponent(i.id)}/links`} class="claim-action" id="rotate-links">
              <fieldset>
                <legend>Rotate the links</legend>
                <Csrf token={session.csrfToken} />
                <label class="confirm"><input type="checkbox" name="confirm" value="yes" required /> End the current links; the customer needs the new ones</label>
                <button type="submit" id="rotate-links-submit">Rotate links</button>
              </fieldset>
            </form>
        </section>
      ) : null}
      {open ? (
        <p class="actions" id="invoice-actions">
          <a class="button" id="mark-paid-link" href={`/console/invoices/${encodeURIComponent(i.id)}/mark-paid`}>Mark paid…</a>{' '}
          <a class="button danger" id="void-link" href={`/console/invoices/${encodeURIComponent(i.id)}/void`}>Void…</a>
        </p>
      ) : null}
      <h2>Lines</h2>
      <TableBox label="Lines">
        <table id="lines">
          <thead><tr><th>Product</th><th>Description</th><th class="num">Quantity</th><th class="num">Unit</th><th class="num">Amount</th></tr></thead>
          <tbody>
            {rowsOr(i.line_items, (l) => (
              <tr><td>{l.product_name}</td><td>{(l as { description?: string }).description ?? ''}</td><td class="num">{l.quantity}</td><td class="num">{l.unit_amount}</td><td class="num">{l.amount}</td></tr>
            ), 5, 'No lines.')}
          </tbody>
          <tfoot><tr><th scope="row" colSpan={4}>Total</th><td class="num">{i.total_amount}</td></tr></tfoot>
        </table>
      </TableBox>
      <h2>Payments and allocations</h2>
      <TableBox label="Payments and allocations">
        <table id="allocations">
          <thead><tr><th>Payment</th><th>Paid with</th><th>Source</th><th>To address</th><th class="num">Applied (USD)</th><th>At</th></tr></thead>
          <tbody>
            {rowsOr(d.allocations, (a) => (
              <tr>
                <td>{paymentLink(a.transaction_id)}</td>
                <td>{a.payment ? `${a.payment.amount} ${a.payment.currency}` : '—'}</td>
                <td>{a.payment?.source ?? '—'}</td>
                <td>{a.payment ? <><code class="hash">{a.payment.to_address}</code> <a href={a.payment.explorer.url} rel="noopener noreferrer" target="_blank">{`on ${a.payment.explorer.name}`}</a></> : '—'}</td>
                <td class="num">{a.amount_applied}{a.pays_in_full ? ' (settles it)' : ''}</td>
                <td>{a.created_at}</td>
              </tr>
            ), 6, 'No crypto payment applied.')}
          </tbody>
        </table>
      </TableBox>
      <h2>Events</h2>
      <TableBox label="Events">
        <table id="events">
          <thead><tr><th>At</th><th>Event</th><th>Status then</th><th>Id</th></tr></thead>
          <tbody>
            {rowsOr(d.events, (e) => <tr><td>{e.at}</td><td>{e.event}</td><td>{e.status ?? ''}</td><td><CopyId id={e.id} /></td></tr>, 4, 'No events kept (events are kept 30 days).')}
          </tbody>
        </table>
      </TableBox>
      <section id="invoice-audit" aria-labelledby="invoice-audit-heading">
        <h2 id="invoice-audit-heading">Console actions</h2>
        {d.audit.length ? <ul class="evidence audit">{d.audit.map((a) => <li>{auditLine(a, false)}</li>)}</ul> : <p class="notice">None.</p>}
      </section>
    </>
  );
  return layout(`Invoice ${i.id}`, body, { session, current: '/console/invoices' });
}

/** The confirmation step of an action: what will happen, the step-up, an explicit tick. */
export function invoiceActionPage(session: ConsoleSessionView, d: InvoiceData, action: InvoiceAction, m: Messages = {}): string {
  const a = ACTIONS[action];
  const i = d.invoice;
  const formId = `${a.path}-form`;
  const body = (
    <>
      <p><a href={`/console/invoices/${encodeURIComponent(i.id)}`}>← Invoice {i.id}</a></p>
      <h1>{`${a.title}: invoice ${i.id}`}</h1>
      <Flash m={m} />
      <InvoiceFacts d={d} />
      <h2>What will happen</h2>
      <ul class="evidence" id="action-effects">{a.effect(d).map((line) => <li>{line}</li>)}</ul>
      <form method="post" action={`/console/invoices/${encodeURIComponent(i.id)}/${a.path}`} class="claim-action" id={formId}>
        <fieldset>
          <legend>{a.title}</legend>
          <Csrf token={session.csrfToken} />
          <StepUp id={`${a.path}-step-up`} twoFactor={session.twoFactor} />
          <label class="confirm"><input type="checkbox" name="confirm" value="yes" required />{` ${a.title} invoice ${i.id} of ${d.customer?.name ?? d.customer?.email ?? i.customer_id}`}</label>
          <button type="submit" class={action === 'void' ? 'danger' : undefined} id={`${a.path}-submit`}>{a.button}</button>
        </fieldset>
      </form>
    </>
  );
  return layout(`${a.title} ${i.id}`, body, { session, current: '/console/invoices' });
}

export function paymentsPage(session: ConsoleSessionView, t: { rows: PaymentRow[]; pagination: Pagination }): string {
  const p = t.pagination;
  const body = (
    <>
      <h1>Payments <small class="notice">({scopeName(session)}, newest first)</small></h1>
      <p class="notice" id="payment-count">{`${p.count} payment${p.count === 1 ? '' : 's'}`}</p>
      <TableBox label="Payments">
        <table id="payments">
          <thead><tr><th>Payment</th><th>At</th><th>Customer</th><th class="num">Amount</th><th class="num">USD</th><th class="num">Credit left</th><th>Source</th><th class="num">Invoices</th></tr></thead>
          <tbody>
            {rowsOr(t.rows, (r) => (
              <tr>
                <td>{paymentLink(r.id)}</td><td>{r.timestamp}</td><td><CustomerCell id={r.customer_id} label={r.customer} /></td>
                <td class="num">{`${r.amount} ${r.currency}`}</td><td class="num">{r.usd_value ?? '—'}</td><td class="num">{r.unallocated_amount ?? 'not allocated yet'}</td>
                <td>{r.source}</td><td class="num">{r.invoices}</td>
              </tr>
            ), 8, 'No payments yet.')}
          </tbody>
        </table>
      </TableBox>
      <Pager base="/console/payments" params={{}} page={p.page} pages={p.pages} more={p.page < p.pages} />
    </>
  );
  return layout('Payments', body, { session, current: '/console/payments' });
}

function Fact({ label, children }: { label: string; children: ComponentChildren }) {
  return <><dt>{label}</dt><dd>{children}</dd></>;
}

export function paymentPage(session: ConsoleSessionView, d: PaymentData): string {
  const body = (
    <>
      <p><a href="/console/payments">← Payments</a></p>
      <h1>Payment <span id="payment-id">{d.id}</span></h1>
      <dl class="claim-facts">
        <Fact label="Amount">{`${d.amount} ${d.currency}`}</Fact>
        <Fact label="USD value">{d.usd_value ? `${d.usd_value} (at ${d.usd_price} USD per ${d.currency})` : 'not priced yet'}</Fact>
        <Fact label="Customer"><CustomerCell id={d.customer_id} label={d.customer} /></Fact>
        <Fact label="Source"><span id="payment-source">{d.source}</span>{d.claim ? <> (claim <CopyId id={d.claim.id} />{d.claim.approved_at ? `, approved ${d.claim.approved_at}` : ''})</> : null}</Fact>
        <Fact label="Transaction hash"><code class="hash">{d.hash}</code></Fact>
        <Fact label="To address"><code class="hash">{d.to_address}</code> <a href={d.explorer.url} rel="noopener noreferrer" target="_blank">{`on ${d.explorer.name}`}</a></Fact>
        {d.from_address ? <Fact label="From address"><code class="hash">{d.from_address}</code></Fact> : null}
        <Fact label="At">{d.timestamp}</Fact>
        <Fact label="Credit left (USD)"><span id="payment-credit">{d.unallocated_amount ?? 'not allocated yet'}</span></Fact>
      </dl>
      <h2>Allocation</h2>
      <TableBox label="Allocation">
        <table id="payment-allocations">
          <thead><tr><th>Invoice</th><th>Invoice status</th><th class="num">Invoice total</th><th class="num">Applied (USD)</th><th class="num">Given back as credit</th><th>At</th></tr></thead>
          <tbody>
            {rowsOr(d.allocations, (a) => (
              <tr>
                <td>{invoiceLink(a.invoice_id)}</td><td>{a.invoice_status ?? 'deleted'}</td><td class="num">{a.invoice_total ?? '—'}</td>
                <td class="num">{a.amount_applied}{a.pays_in_full ? ' (settles it)' : ''}</td><td class="num">{a.released_amount ?? ''}</td><td>{a.created_at}</td>
              </tr>
            ), 6, d.allocated_at ? 'Applied to no invoice: all of it is credit.' : 'Not allocated yet.')}
          </tbody>
          {d.unallocated_amount !== null ? <tfoot><tr><th scope="row" colSpan={3}>Credit left</th><td class="num" id="payment-credit-total">{d.unallocated_amount}</td><td colSpan={2}></td></tr></tfoot> : null}
        </table>
      </TableBox>
    </>
  );
  return layout(`Payment ${d.id}`, body, { session, current: '/console/payments' });
}
