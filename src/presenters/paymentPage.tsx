/** @jsxImportSource preact */
/**
 * What the customer's payment pages share (a claim link's pay page, payPage.tsx; an invoice's
 * hosted page, invoicePage.tsx): the stylesheet, the CSP, the document around the content, the
 * live status box, and per address the QR code of the payment URI with the estimated amount and
 * copy buttons. One script (src/api/pages/assets/payPage.js) enhances both: copy buttons, live
 * status by polling the page's public endpoint, refreshed estimates.
 */
import { createHash } from 'node:crypto';
import type { ComponentChildren } from 'preact';
import { InlineStyle, PageMeta, renderDocument } from '../lib/html';
import { paymentStatusText, PaymentStatus } from '../cryptocurrency/paymentStatus';
import type { paymentOptions } from '../services/crypto/paymentOptions';

export interface PayPageScript {
  /** Path the page loads it from, and its SRI value (`sha256-<base64>`), also allowed by the CSP. */
  path: string;
  integrity: string;
}

/** What a page offers to pay with: per address the estimate, URI and QR code; the spot quotes. */
export type PaymentOptionsView = Awaited<ReturnType<typeof paymentOptions>>;
export type PayToOption = PaymentOptionsView['pay_to'][number];

// Colours chosen for contrast of at least 4.5:1 on their backgrounds (axe checks it in the browser test).
export const PAY_PAGE_STYLE = `
body { font-family: system-ui, sans-serif; line-height: 1.45; color: #1d1d1f; background: #fff; margin: 0; }
main { max-width: 44rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; } h2 { font-size: 1.15rem; margin: 0 0 .6rem; } h3 { font-size: 1.05rem; margin: 0 0 .5rem; }
section, form { border: 1px solid #c8c8cc; border-radius: 8px; padding: 1rem; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .4rem; border-bottom: 1px solid #e2e2e6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.id { overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: .9rem; }
td.text { overflow-wrap: anywhere; }
tfoot th, tfoot td { font-weight: 700; border-bottom: 0; }
.status { font-size: 1.1rem; font-weight: 600; border-width: 2px; }
.status[data-state="waiting"] { border-color: #8a6d00; background: #fff8e1; }
.status[data-state="detected"] { border-color: #0b57d0; background: #eaf1fd; }
.status[data-state="paid"] { border-color: #146c2e; background: #e7f5ea; color: #0f5223; }
.status p { margin: 0; }
.option { border-top: 1px solid #e2e2e6; padding-top: 1rem; margin-top: 1rem; }
.option:first-of-type { border-top: 0; margin-top: 0; padding-top: 0; }
.qr { display: block; width: 220px; height: 220px; max-width: 100%; margin: .3rem 0 .8rem; background: #fff; }
.value { font-family: ui-monospace, monospace; font-size: 1rem; overflow-wrap: anywhere; background: #f4f4f6; padding: .1rem .3rem; border-radius: 4px; }
.row { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem .6rem; margin: .4rem 0; }
.estimate { display: inline-block; font-size: .8rem; font-weight: 600; color: #5c4400; background: #fff1c2; border-radius: 4px; padding: 0 .35rem; }
.muted { color: #545458; font-size: .92rem; }
.alert { border-color: #b3261e; color: #8c1d18; background: #fdecea; }
.notice { border-color: #8a6d00; background: #fff8e1; }
.parties { display: flex; flex-wrap: wrap; gap: .5rem 2rem; margin: 0 0 1rem; }
.parties p { margin: 0; overflow-wrap: anywhere; }
dl.summary { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 .6rem; }
dl.summary dt { font-weight: 600; } dl.summary dd { margin: 0; font-variant-numeric: tabular-nums; }
.table-box { overflow-x: auto; }
label { display: block; margin-top: .8rem; font-weight: 600; }
input, select { width: 100%; padding: .45rem; font-size: 1rem; box-sizing: border-box; border: 1px solid #6e6e73; border-radius: 4px; }
button { font-size: 1rem; padding: .45rem .9rem; border-radius: 6px; border: 1px solid #0b57d0; background: #0b57d0; color: #fff; cursor: pointer; }
button.copy { font-size: .9rem; padding: .25rem .7rem; background: #fff; color: #0b57d0; }
button.copy[data-copied] { background: #146c2e; border-color: #146c2e; color: #fff; }
button[type=submit] { margin-top: 1rem; }
a { color: #0b57d0; }
:focus-visible { outline: 3px solid #1d1d1f; outline-offset: 2px; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
[hidden] { display: none !important; }
`;

const sha256 = (s: string) => createHash('sha256').update(s).digest('base64');

/** The SRI value of a script's text. */
export function scriptIntegrity(source: string): string {
  return `sha256-${sha256(source)}`;
}

/**
 * Only the page's script file (by its hash, which needs the SRI attribute, and by its exact URL
 * for browsers without hashes of external scripts), the one stylesheet by hash, images (QR
 * codes) and fetches from this origin. No inline script.
 */
export function payPageContentSecurityPolicy(origin: string, script: PayPageScript): string {
  return [
    "default-src 'none'",
    `script-src '${script.integrity}' ${origin}${script.path}`,
    `style-src 'sha256-${sha256(PAY_PAGE_STYLE)}'`,
    "img-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** A row of the invoices a payment settles, as a claim link's public endpoint lists them. */
export interface InvoiceDue {
  id: string;
  status: string;
  due_date: string;
  total_amount: string;
  amount_due: string;
}

/** The amount cell of an invoice row: its total, and what is still due or that it is paid (the script writes the same). */
function invoiceAmount(i: InvoiceDue): string {
  if (i.status === 'paid') return `${i.total_amount} USD, paid`;
  return i.amount_due === i.total_amount ? `${i.total_amount} USD` : `${i.total_amount} USD, ${i.amount_due} USD due`;
}

/** The invoices a payment settles and their total (`#amount-due`), which the script refreshes as it polls. */
export function InvoicesDueTable({ invoices, caption, totalLabel, amountDue }: { invoices: readonly InvoiceDue[]; caption: string; totalLabel: string; amountDue: string }) {
  return (
    <table id="invoices">
      <caption class="sr-only">{caption}</caption>
      <thead><tr><th scope="col">Invoice</th><th scope="col">Due date</th><th scope="col" class="num">Amount</th></tr></thead>
      <tbody>
        {invoices.map((i) => (
          <tr data-invoice-id={i.id}><td class="id">{i.id}</td><td>{i.due_date}</td><td class="num">{invoiceAmount(i)}</td></tr>
        ))}
      </tbody>
      <tfoot><tr><th scope="row" colSpan={2}>{totalLabel}</th><td class="num"><span id="amount-due">{amountDue}</span> USD</td></tr></tfoot>
    </table>
  );
}

/** The live status box (`waiting`, `detected`, `paid`); the script rewrites it as it polls. */
export function StatusBox({ status }: { status: PaymentStatus }) {
  return (
    <section id="status" class="status" role="status" aria-live="polite" data-state={status.state}>
      <p id="status-text">{paymentStatusText(status)}</p>
    </section>
  );
}

/** One address to pay to: its QR code, the estimated amount and the address with copy buttons, a wallet link. */
export function PayOption({ a, n, amountDue, quotes }: { a: PayToOption; n: number; amountDue: string; quotes: PaymentOptionsView['quotes'] }) {
  const quote = quotes.find((q) => q.currency === a.currency);
  const alt = a.amount ? `QR code: pay about ${a.amount} ${a.currency} to ${a.address}` : `QR code: the ${a.currency} address ${a.address}`;
  return (
    <div class="option" data-option={n} data-currency={a.currency} data-address={a.address}>
      <h3>Pay with {a.currency}</h3>
      <img class="qr" src={a.qr_code_url} width="220" height="220" alt={alt} />
      {a.amount ? (
        <>
          <div class="row">
            <span>Amount <span class="estimate">estimate</span></span>
            <span class="value" id={`amount-${n}`} data-field="amount">{a.amount}</span><span>{a.currency}</span>
            <button type="button" class="copy" data-copy={`amount-${n}`} data-label="Copy amount" hidden>Copy amount</button>
          </div>
          <p class="muted" data-field="rate">{`Estimated from ${amountDue} USD at 1 ${a.currency} = ${quote?.usd_price ?? '?'} USD; this page updates it when the price changes.`}</p>
        </>
      ) : (
        <p class="muted">{`Amount: ${amountDue} USD in ${a.currency} (no price available; enter the amount in your wallet).`}</p>
      )}
      <div class="row">
        <span>Address</span>
        <span class="value" id={`address-${n}`}>{a.address}</span>
        <button type="button" class="copy" data-copy={`address-${n}`} data-label="Copy address" hidden>Copy address</button>
      </div>
      <p class="row">
        <a class="wallet-link" href={a.payment_uri}>Open in a wallet app</a>
        <a href={a.explorer.url} rel="noopener noreferrer" target="_blank">Check the address on {a.explorer.name}</a>
      </p>
    </div>
  );
}

/** Every address to pay to (or what to do without one), and the live region the copy buttons speak in. */
export function PayOptions({ options, amountDue, none }: { options: PaymentOptionsView; amountDue: string; none: string }) {
  return (
    <>
      {options.pay_to.length ? options.pay_to.map((a, n) => <PayOption a={a} n={n} amountDue={amountDue} quotes={options.quotes} />) : <p>{none}</p>}
      <p id="copy-status" class="sr-only" role="status" aria-live="polite"></p>
    </>
  );
}

/** The whole page around `body`; `script` is left out where there is nothing to enhance. */
export function paymentDocument(title: string, heading: ComponentChildren, body: ComponentChildren, script: PayPageScript | null): string {
  return renderDocument(
    <html lang="en">
      <head>
        <PageMeta />
        <title>{title}</title>
        <InlineStyle css={PAY_PAGE_STYLE} />
        {script ? <script src={script.path} integrity={script.integrity} defer></script> : null}
      </head>
      <body>
        <main>
          <h1>{heading}</h1>
          {body}
        </main>
      </body>
    </html>,
  );
}
