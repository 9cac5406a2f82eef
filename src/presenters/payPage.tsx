/** @jsxImportSource preact */
/**
 * The customer's pay page (`/pay/<secret>`) as HTML, rendered on the server from what the public
 * link endpoint answers, so it is complete before any script runs: what is being paid, the
 * status, per address a QR code of the payment URI with the estimated amount, and the claim
 * form. The script (a file of its own, `src/api/pages/assets/payPage.js`) only enhances it:
 * copy buttons, a countdown, live status by polling, the proof of work for the claim.
 */
import { createHash } from 'node:crypto';
import type { ComponentChildren } from 'preact';
import { InlineStyle, PageMeta, renderDocument } from '../lib/html';
import { paymentStatusText } from '../cryptocurrency/paymentStatus';
import type { ClosedPublicLink, PublicPaymentClaimLink } from '../services/publicPaymentClaimLinks';

export type OpenPublicLink = Extract<PublicPaymentClaimLink, { usable: true }>;
/** What the page shows: a usable link, a closed one (its status only), or none (unknown secret). */
export type PayPageView = OpenPublicLink | ClosedPublicLink | null;

export interface PayPageScript {
  /** Path the page loads it from, and its SRI value (`sha256-<base64>`), also allowed by the CSP. */
  path: string;
  integrity: string;
}

// Colours chosen for contrast of at least 4.5:1 on their backgrounds (axe checks it in the browser test).
export const PAY_PAGE_STYLE = `
body { font-family: system-ui, sans-serif; line-height: 1.45; color: #1d1d1f; background: #fff; margin: 0; }
main { max-width: 44rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; } h2 { font-size: 1.15rem; margin: 0 0 .6rem; } h3 { font-size: 1.05rem; margin: 0 0 .5rem; }
section, form { border: 1px solid #c8c8cc; border-radius: 8px; padding: 1rem; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .4rem; border-bottom: 1px solid #e2e2e6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.id { overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: .9rem; }
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

const CLOSED_TEXT: Record<string, string> = {
  expired: 'This payment link has expired. Please ask for a new link.',
  used: 'This payment link has already been used. Please ask for a new link.',
};

function closedText(link: ClosedPublicLink | null): string {
  if (!link) return 'This payment link does not exist. Please check the address or ask for a new link.';
  return CLOSED_TEXT[link.expired ? 'expired' : link.status] ?? 'This payment link can no longer be used.';
}

/** "2026-11-26 13:00 UTC": unambiguous before the script shows local time. */
function utc(isoTime: string): string {
  return `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)} UTC`;
}

/** The amount cell of an invoice row: its total, and what is still due or that it is paid. */
function invoiceAmount(i: OpenPublicLink['invoices'][number]): string {
  if (i.status === 'paid') return `${i.total_amount} USD, paid`;
  return i.amount_due === i.total_amount ? `${i.total_amount} USD` : `${i.total_amount} USD, ${i.amount_due} USD due`;
}

function InvoicesTable({ link }: { link: OpenPublicLink }) {
  // A price link asks for the price, not for the invoices (whose total would not match).
  return (
    <section aria-labelledby="what-heading">
      <h2 id="what-heading">What you are paying</h2>
      {link.price ? <p>Price: <strong>{`${link.price.amount} ${link.price.currency.toUpperCase()}`}</strong></p> : null}
      {link.invoices.length && !link.price ? (
        <table id="invoices">
          <caption class="sr-only">Invoices being paid</caption>
          <thead><tr><th scope="col">Invoice</th><th scope="col">Due date</th><th scope="col" class="num">Amount</th></tr></thead>
          <tbody>
            {link.invoices.map((i) => (
              <tr data-invoice-id={i.id}><td class="id">{i.id}</td><td>{i.due_date}</td><td class="num">{invoiceAmount(i)}</td></tr>
            ))}
          </tbody>
          <tfoot><tr><th scope="row" colSpan={2}>Total due</th><td class="num"><span id="amount-due">{link.amount_due}</span> USD</td></tr></tfoot>
        </table>
      ) : (
        <p>Total due: <strong><span id="amount-due">{link.amount_due}</span> USD</strong></p>
      )}
    </section>
  );
}

function PayOption({ link, a, n }: { link: OpenPublicLink; a: OpenPublicLink['pay_to'][number]; n: number }) {
  const quote = link.quotes.find((q) => q.currency === a.currency);
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
          <p class="muted" data-field="rate">{`Estimated from ${link.amount_due} USD at 1 ${a.currency} = ${quote?.usd_price ?? '?'} USD; this page updates it when the price changes.`}</p>
        </>
      ) : (
        <p class="muted">{`Amount: ${link.amount_due} USD in ${a.currency} (no price available; enter the amount in your wallet).`}</p>
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

function PaySection({ link, paid }: { link: OpenPublicLink; paid: boolean }) {
  return (
    <section id="pay" aria-labelledby="pay-heading" hidden={paid}>
      <h2 id="pay-heading">How to pay</h2>
      <p id="expiry">This link expires <time id="expires-at" datetime={link.expires_at}>{utc(link.expires_at)}</time><span id="countdown"></span>.</p>
      {link.pay_to.length
        ? link.pay_to.map((a, n) => <PayOption link={link} a={a} n={n} />)
        : <p>No payment address has been set up yet. Please contact the sender of this link.</p>}
      <p id="copy-status" class="sr-only" role="status" aria-live="polite"></p>
    </section>
  );
}

function ClaimForm({ link, paid }: { link: OpenPublicLink; paid: boolean }) {
  const currencies = [...new Set(link.pay_to.map((a) => a.currency))];
  return (
    <>
      <form id="claim-form" aria-labelledby="claim-heading" novalidate hidden={paid || !link.pay_to.length}>
        <h2 id="claim-heading">Already paid? Tell us about it</h2>
        <p class="muted">Paid, and the status above has not changed? Send us the transaction hash and we will check it.</p>
        <noscript><p>Sending this form needs JavaScript (it runs a short anti-spam check in your browser).</p></noscript>
        <label for="currency">Currency</label>
        <select id="currency" name="currency" required>{currencies.map((c) => <option value={c}>{c}</option>)}</select>
        <label for="to_address">Sent to address</label>
        <select id="to_address" name="to_address" required>{link.pay_to.map((a) => <option value={a.address} data-currency={a.currency}>{a.address}</option>)}</select>
        <label for="amount">Amount sent</label>
        <input id="amount" name="amount" inputmode="decimal" placeholder="0.015" required autocomplete="off" />
        <label for="transaction_id">Transaction hash</label>
        <input id="transaction_id" name="transaction_id" required autocomplete="off" spellcheck={false} />
        <button id="submit" type="submit">Submit payment claim</button>
        <p id="form-error" class="alert" role="alert" hidden></p>
      </form>
      <section id="done" role="status" hidden></section>
    </>
  );
}

function document(title: string, body: ComponentChildren, script: PayPageScript | null): string {
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
          <h1>Payment</h1>
          {body}
        </main>
      </body>
    </html>,
  );
}

/**
 * The whole page. `apiPath` is the public link endpoint the script polls. A closed or unknown
 * link gets its message and no script (nothing to enhance).
 */
export function renderPayPage(view: PayPageView, script: PayPageScript, apiPath: string): string {
  if (!view || !view.usable) {
    return document(
      'Payment link unavailable',
      <section id="unusable" class="alert" role="alert" data-status={view?.status ?? 'missing'}><p>{closedText(view)}</p></section>,
      null,
    );
  }
  const paid = view.payment_status.state === 'paid';
  return document(
    paid ? 'Paid' : 'Payment',
    <div id="pay-page" data-api={apiPath} data-expires-at={view.expires_at}>
      <section id="status" class="status" role="status" aria-live="polite" data-state={view.payment_status.state}><p id="status-text">{paymentStatusText(view.payment_status)}</p></section>
      <section id="unusable" class="alert" role="alert" hidden></section>
      <InvoicesTable link={view} />
      <PaySection link={view} paid={paid} />
      <ClaimForm link={view} paid={paid} />
    </div>,
    script,
  );
}
