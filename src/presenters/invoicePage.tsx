/** @jsxImportSource preact */
/**
 * An invoice's hosted page (`/invoice/<secret>`) as HTML, rendered on the server from what its
 * public endpoint answers: who bills whom, the lines and totals, the payments received, what is
 * still due, a link to its PDF, and how to pay it. A payment pays the customer's oldest open
 * invoice first, so with older ones open the page says so and asks for their balances too. The
 * pay page's script enhances it the same way (copy buttons, live status, refreshed estimates).
 */
import type { PublicInvoice } from '../services/billing/invoiceDocuments';
import { InvoicesDueTable, PayOptions, PayPageScript, paymentDocument, StatusBox } from './paymentPage';

/** What the page shows: an invoice, or none (a secret that opens nothing). */
export type InvoicePageView = PublicInvoice | null;

const STATUS_WORDS: Record<string, string> = { pending: 'Open', overdue: 'Overdue', paid: 'Paid', canceled: 'Void' };

function Parties({ view }: { view: PublicInvoice }) {
  return (
    <div class="parties">
      <p><span class="muted">From</span><br /><strong>{view.account.name}</strong></p>
      <p>
        <span class="muted">Billed to</span><br />
        {view.customer.name ? <><strong>{view.customer.name}</strong><br /></> : null}
        {view.customer.email ?? ''}
      </p>
    </div>
  );
}

function Summary({ view, pdfPath }: { view: PublicInvoice; pdfPath: string }) {
  return (
    <section aria-labelledby="summary-heading">
      <h2 id="summary-heading">Summary</h2>
      <dl class="summary">
        <dt>Status</dt><dd id="invoice-status">{STATUS_WORDS[view.status] ?? view.status}</dd>
        <dt>Due date</dt><dd>{view.due_date}</dd>
        {view.period_start ? <><dt>Period</dt><dd>{`${view.period_start.slice(0, 10)} to ${view.period_end ? view.period_end.slice(0, 10) : 'open'}`}</dd></> : null}
        <dt>Total</dt><dd>{view.total_amount} USD</dd>
        <dt>Paid</dt><dd>{view.amount_paid} USD</dd>
        <dt>Still due</dt><dd id="amount-remaining">{view.amount_remaining} USD</dd>
      </dl>
      <p><a href={pdfPath}>Download the invoice as a PDF</a></p>
    </section>
  );
}

function Lines({ view }: { view: PublicInvoice }) {
  return (
    <section aria-labelledby="lines-heading">
      <h2 id="lines-heading">Lines</h2>
      <div class="table-box">
        <table id="lines">
          <thead><tr><th scope="col">Item</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
          <tbody>
            {view.line_items.map((l) => (
              <tr>
                <td class="text">{l.product_name}{l.description ? <><br /><span class="muted">{l.description}</span></> : null}</td>
                <td class="num">{l.quantity}</td><td class="num">{l.unit_amount} USD</td><td class="num">{l.amount} USD</td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr><th scope="row" colSpan={3}>Total</th><td class="num">{view.total_amount} USD</td></tr>
            <tr><th scope="row" colSpan={3}>Paid</th><td class="num">{view.amount_paid} USD</td></tr>
            <tr><th scope="row" colSpan={3}>Still due</th><td class="num">{view.amount_remaining} USD</td></tr>
          </tfoot>
        </table>
      </div>
    </section>
  );
}

function Payments({ view }: { view: PublicInvoice }) {
  if (view.payments.length === 0) return null;
  return (
    <section aria-labelledby="payments-heading">
      <h2 id="payments-heading">Payments received</h2>
      <div class="table-box">
        <table>
          <thead><tr><th scope="col">Date</th><th scope="col">Paid with</th><th scope="col" class="num">Applied</th></tr></thead>
          <tbody>
            {view.payments.map((p) => (
              <tr>
                <td>{p.date.slice(0, 10)}</td>
                <td class="id">{p.currency ? `${p.amount} ${p.currency}` : 'Payment'}{p.transaction_hash ? <><br />{p.transaction_hash}</> : null}</td>
                <td class="num">{p.amount_applied} USD</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Older open invoices are paid first: what they are, and the amount that settles this one with them. */
function Earlier({ view }: { view: PublicInvoice }) {
  const older = view.invoices.length - 1;
  return (
    <section id="earlier" class="notice" aria-labelledby="earlier-heading">
      <h2 id="earlier-heading">{older === 1 ? 'An older invoice is still open' : `${older} older invoices are still open`}</h2>
      <p>A payment pays your oldest open invoice first, so this invoice is settled once those are. To settle it, pay its balance and theirs together:</p>
      <div class="table-box">
        <InvoicesDueTable invoices={view.invoices} caption="Invoices this payment settles, oldest first" totalLabel="Total to pay" amountDue={view.amount_due} />
      </div>
    </section>
  );
}

function PaySection({ view, paid }: { view: PublicInvoice; paid: boolean }) {
  const earlier = view.invoices.length > 1;
  return (
    <section id="pay" aria-labelledby="pay-heading" hidden={paid}>
      <h2 id="pay-heading">How to pay</h2>
      {earlier ? (
        <p>Amount to pay: <strong>{view.amount_due} USD</strong>, this invoice and the older ones above.</p>
      ) : (
        <p>Amount to pay: <strong><span id="amount-due">{view.amount_due}</span> USD</strong></p>
      )}
      <PayOptions options={view} amountDue={view.amount_due} none="No payment address has been set up for you yet. Please contact the sender of this invoice." />
    </section>
  );
}

/**
 * The whole page. `paths`: the public endpoint the script polls and the PDF's path. An unknown
 * secret gets its message, and a void or settled invoice its content, without the script.
 */
export function renderInvoicePage(view: InvoicePageView, script: PayPageScript, paths: { api: string; pdf: string }): string {
  if (!view) {
    return paymentDocument(
      'Invoice unavailable',
      'Invoice',
      <section id="unusable" class="alert" role="alert" data-status="missing"><p>This invoice link does not exist. Please check the address or ask the sender for a new link.</p></section>,
      null,
    );
  }
  const title = `Invoice ${view.id}`;
  if (!view.usable) {
    return paymentDocument(
      `${title} (void)`,
      title,
      <>
        <Parties view={view} />
        <section id="unusable" class="alert" role="alert" data-status={view.status}><p>This invoice is void: it was canceled and nothing is due.</p></section>
        <Summary view={view} pdfPath={paths.pdf} />
        <Lines view={view} />
        <Payments view={view} />
      </>,
      null,
    );
  }
  const paid = view.payment_status.state === 'paid';
  const payable = !paid && view.amount_due !== '0.00';
  return paymentDocument(
    paid ? `${title} (paid)` : title,
    title,
    <div id="pay-page" data-api={paths.api} data-paid-title={`${title} (paid)`} data-closed-text="This invoice is void: it was canceled and nothing is due." data-missing-text="This invoice link no longer works. Please ask the sender for a new link.">
      <Parties view={view} />
      <StatusBox status={view.payment_status} />
      <section id="unusable" class="alert" role="alert" hidden></section>
      <Summary view={view} pdfPath={paths.pdf} />
      <Lines view={view} />
      <Payments view={view} />
      {payable && view.invoices.length > 1 ? <Earlier view={view} /> : null}
      {payable ? <PaySection view={view} paid={paid} /> : null}
    </div>,
    payable ? script : null,
  );
}
