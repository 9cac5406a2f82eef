/** @jsxImportSource preact */
/**
 * The customer's pay page (`/pay/<secret>`) as HTML, rendered on the server from what the public
 * link endpoint answers, so it is complete before any script runs: what is being paid, the
 * status, per address a QR code of the payment URI with the estimated amount, and the claim
 * form. The script (a file of its own, `src/api/pages/assets/payPage.js`) only enhances it:
 * copy buttons, a countdown, live status by polling, the proof of work for the claim.
 */
import type { ComponentChild } from 'preact';
import type { ClosedPublicLink, PublicPaymentClaimLink } from '../services/crypto/publicPaymentClaimLinks';
import { InvoicesDueTable, PayOptions, PayPageScript, paymentDocument, StatusBox } from './paymentPage';

export { payPageContentSecurityPolicy, scriptIntegrity } from './paymentPage';
export type { PayPageScript } from './paymentPage';

export type OpenPublicLink = Extract<PublicPaymentClaimLink, { usable: true }>;
/** What the page shows: a usable link, a closed one (its status only), or none (unknown secret). */
export type PayPageView = OpenPublicLink | ClosedPublicLink | null;

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

function InvoicesTable({ link }: { link: OpenPublicLink }) {
  // A price link asks for the price, not for the invoices (whose total would not match).
  return (
    <section aria-labelledby="what-heading">
      <h2 id="what-heading">What you are paying</h2>
      {link.price ? <p>Price: <strong>{`${link.price.amount} ${link.price.currency.toUpperCase()}`}</strong></p> : null}
      {link.invoices.length && !link.price ? (
        <InvoicesDueTable invoices={link.invoices} caption="Invoices being paid" totalLabel="Total due" amountDue={link.amount_due} />
      ) : (
        <p>Total due: <strong><span id="amount-due">{link.amount_due}</span> USD</strong></p>
      )}
    </section>
  );
}

function PaySection({ link, paid }: { link: OpenPublicLink; paid: boolean }) {
  return (
    <section id="pay" aria-labelledby="pay-heading" hidden={paid}>
      <h2 id="pay-heading">How to pay</h2>
      <p id="expiry">This link expires <time id="expires-at" datetime={link.expires_at}>{utc(link.expires_at)}</time><span id="countdown"></span>.</p>
      <PayOptions options={link} amountDue={link.amount_due} none="No payment address has been set up yet. Please contact the sender of this link." />
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

function document(title: string, body: ComponentChild, script: PayPageScript | null): string {
  return paymentDocument(title, 'Payment', body, script);
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
      <StatusBox status={view.payment_status} />
      <section id="unusable" class="alert" role="alert" hidden></section>
      <InvoicesTable link={view} />
      <PaySection link={view} paid={paid} />
      <ClaimForm link={view} paid={paid} />
    </div>,
    script,
  );
}
