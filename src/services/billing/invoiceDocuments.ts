/**
 * An invoice as its customer meets it, through its unguessable link (services/billing/invoiceLinks.ts):
 * the hosted page (what it bills, where it stands, how to pay it in BTC or ETH), its public JSON
 * that the page polls, its QR codes, and its PDF, kept in the database until what it shows changes.
 */
import { createHash } from 'node:crypto';
import { Account, AccountDoc } from '../../models/account';
import { Customer, CustomerDoc } from '../../models/customer';
import { CryptoTransaction, CryptoTransactionDoc } from '../../models/cryptoTransaction';
import { findOpenInvoices, InvoiceDoc, OPEN_INVOICE_STATUSES } from '../../models/invoice';
import { InvoicePdf, InvoicePdfDoc } from '../../models/invoiceDocument';
import { Scope, scopeOfDoc, findInScope, inScope } from '../../models/scope';
import { iso } from '../../presenters/common';
import { InvoicePdfView, PdfFonts, renderInvoicePdf } from '../../presenters/invoicePdf';
import type { InvoiceDocumentUrls } from '../../presenters/invoice';
import { amountDue } from '../../billing/lineRemoval';
import { compareAmounts } from '../../billing/money';
import { settlementOf } from '../../cryptocurrency/settlement';
import { derivePaymentStatus } from '../../cryptocurrency/paymentStatus';
import type { Dependencies } from '../../dependencies';
import { findInvoice } from './invoices';
import { cryptoAllocationsOf } from './invoiceWrites';
import { findInvoiceBySecret, hostedInvoicePath, invoiceBySecret, invoiceDocumentUrls, rotateLinkSecret } from './invoiceLinks';
import { paymentOptions, payToWallet, pendingChainPayments, PayToWallet, qrPaymentUri } from '../crypto/paymentOptions';

/** What is still due on an invoice: nothing on a paid one (paid within the slippage margin can leave cents on paper) or a void one. */
function balanceOf(i: InvoiceDoc): string {
  return OPEN_INVOICE_STATUSES.includes(i.status) ? amountDue(i.total_amount, i.amount_paid ?? '0.00') : '0.00';
}

const customerName = (c: CustomerDoc | null) => (c ? [c.first_name, c.last_name].filter((s) => s && s.trim()).join(' ') || null : null);

/** Who bills and who is billed, as the page and the PDF name them. */
async function partiesOf(invoice: InvoiceDoc) {
  const [account, customer] = await Promise.all([
    Account.findById(invoice.account_id).lean<AccountDoc>(),
    findInScope<CustomerDoc>(Customer, scopeOfDoc(invoice), invoice.customer_id),
  ]);
  return {
    account: { name: account?.name ?? '' },
    customer: { name: customerName(customer), email: customer?.email ?? null },
    updated: [account?.updated_at, customer?.updated_at].map((d) => iso(d ?? null)),
  };
}

/** The payments applied to the invoice, oldest first, with the transaction each came from. */
async function paymentsOf(invoice: InvoiceDoc) {
  const entries = cryptoAllocationsOf(invoice);
  const txs = await Promise.all(entries.map((e) => CryptoTransaction.findById(e.transaction_id).lean<CryptoTransactionDoc>()));
  return entries.map((e, n) => ({
    date: iso(txs[n]?.timestamp ?? e.created_at)!,
    amount_applied: e.amount_applied,
    currency: txs[n]?.currency ?? null,
    amount: txs[n]?.amount ?? null,
    transaction_hash: txs[n]?.transaction_id ?? null,
  }));
}

const lineItemsOf = (invoice: InvoiceDoc) =>
  (invoice.line_items ?? []).map((l) => ({ product_name: l.product_name, description: l.description ?? null, quantity: l.quantity, unit_amount: l.unit_amount, amount: l.amount }));

/** A row of what a payment settles (the pay page's shape, which the page's script redraws). */
const dueRow = (i: InvoiceDoc) => ({ id: i._id, status: i.status, due_date: i.due_date, total_amount: i.total_amount, amount_due: balanceOf(i) });

/** The customer's other open invoices of the invoice's scope (by customer and status: not the customer's whole history; the scope is checked here). */
async function otherOpenInvoices(invoice: InvoiceDoc): Promise<InvoiceDoc[]> {
  const scope = scopeOfDoc(invoice);
  return (await findOpenInvoices({ customer_id: invoice.customer_id })).filter((i) => i._id !== invoice._id && inScope(i, scope));
}

/**
 * What settles the invoice: its balance plus the balances of the customer's open invoices that
 * a payment pays first (oldest due date first, cryptocurrency/settlement.ts), and those invoices.
 */
async function settlementFor(invoice: InvoiceDoc) {
  if (!OPEN_INVOICE_STATUSES.includes(invoice.status)) return { earlier: [] as InvoiceDoc[], amount: '0.00' };
  const asOpen = (i: InvoiceDoc) => ({ id: i._id, due_date: i.due_date, created_at: iso(i.created_at)!, balance: balanceOf(i), doc: i });
  const { earlier, amount } = settlementOf((await otherOpenInvoices(invoice)).map(asOpen), asOpen(invoice));
  return { earlier: earlier.map((e) => e.doc), amount };
}

/**
 * `GET /v1/public/invoices/:secret`, and what the hosted page renders: the invoice, who bills
 * whom, what is due, what a payment must be to settle it (`amount_due`: its own balance,
 * `amount_remaining`, plus that of older open invoices, listed in `invoices` with it), and where
 * to pay: the customer's own addresses only, since a payment to the account's shared addresses
 * is matched to an invoice by its amount, not by its customer.
 */
export async function getPublicInvoice(deps: Dependencies, secret: string) {
  const invoice = await invoiceBySecret(deps, secret);
  const sandbox = scopeOfDoc(invoice).sandbox !== null;
  const [parties, payments, settlement] = await Promise.all([partiesOf(invoice), paymentsOf(invoice), settlementFor(invoice)]);
  const open = OPEN_INVOICE_STATUSES.includes(invoice.status);
  const wallet: PayToWallet = open ? await payToWallet(invoice, { accountFallback: false }) : { owner: null, addresses: [] };
  const options = compareAmounts(settlement.amount, '0.00') > 0 ? await paymentOptions(deps, wallet, settlement.amount, sandbox, hostedInvoicePath(secret)) : { quotes: [], pay_to: [] };
  return {
    object: 'invoice' as const,
    id: invoice._id,
    status: invoice.status,
    /** False once void: nothing is due and nothing is to be paid. */
    usable: invoice.status !== 'canceled',
    account: parties.account,
    customer: parties.customer,
    due_date: invoice.due_date,
    period_start: iso(invoice.period_start ?? null),
    period_end: iso(invoice.period_end ?? null),
    line_items: lineItemsOf(invoice),
    total_amount: invoice.total_amount,
    amount_paid: invoice.amount_paid ?? '0.00',
    amount_remaining: balanceOf(invoice),
    amount_due: settlement.amount,
    invoices: open ? [...settlement.earlier, invoice].map(dueRow) : [],
    payments,
    payment_status: derivePaymentStatus({ invoiceStatuses: [invoice.status], pending: open ? await pendingChainPayments(deps, wallet) : [] }),
    pay_to: options.pay_to,
    quotes: options.quotes,
    created_at: iso(invoice.created_at)!,
  };
}

export type PublicInvoice = Awaited<ReturnType<typeof getPublicInvoice>>;

/** The hosted page's view of `secret`, or null for a secret that opens nothing. */
export async function findPublicInvoice(deps: Dependencies, secret: string): Promise<PublicInvoice | null> {
  if (!(await findInvoiceBySecret(deps, secret))) return null;
  return getPublicInvoice(deps, secret);
}

/** The payment URI a hosted page's QR code shows: an address of the invoice's customer, the amount the page shows or none. */
export async function invoicePageQrUri(deps: Dependencies, secret: string, address: string, amount: string | null): Promise<string> {
  const invoice = await invoiceBySecret(deps, secret);
  const wallet = await payToWallet(invoice, { accountFallback: false });
  return qrPaymentUri(wallet.addresses, address, amount, 'Not an address of this invoice');
}

// ---- the PDF ----------------------------------------------------------------------------------

/** Bumped when the PDF's layout changes, so that no cached PDF of the old layout is served. */
const PDF_LAYOUT = 'invoice-pdf-1';

async function pdfViewOf(invoice: InvoiceDoc): Promise<InvoicePdfView & { updated: (string | null)[] }> {
  const [parties, payments] = await Promise.all([partiesOf(invoice), paymentsOf(invoice)]);
  return {
    number: invoice._id,
    status: invoice.status,
    issued: iso(invoice.created_at)!.slice(0, 10),
    due_date: invoice.due_date,
    period: invoice.period_start ? { start: iso(invoice.period_start)!.slice(0, 10), end: invoice.period_end ? iso(invoice.period_end)!.slice(0, 10) : null } : null,
    account_name: parties.account.name,
    customer: parties.customer,
    line_items: lineItemsOf(invoice),
    total_amount: invoice.total_amount,
    amount_paid: invoice.amount_paid ?? '0.00',
    amount_due: balanceOf(invoice),
    payments,
    // Not shown, but part of the key: any write of the invoice, the customer or the account makes a new PDF.
    updated: [iso(invoice.updated_at), ...parties.updated],
    created: invoice.updated_at ? new Date(invoice.updated_at) : new Date(invoice.created_at),
  };
}

/** A stored binary as read back: a Buffer, or the driver's BSON Binary (a lean read). */
function storedBytes(stored: unknown): Buffer {
  if (Buffer.isBuffer(stored)) return stored;
  const binary = stored as { buffer: Uint8Array; position?: number };
  return Buffer.from(binary.buffer.subarray(0, binary.position ?? binary.buffer.length));
}

export interface InvoicePdfFile {
  pdf: Buffer;
  /** The digest of what it shows: its ETag. */
  key: string;
  filename: string;
}

/**
 * The invoice's PDF: the stored one while its key (a digest of everything it shows) is current,
 * else made now and stored. Two processes making the same PDF at once store the same content.
 * `ifNoneMatch`: a key the client has; when current, nothing is read or made (`pdf` null).
 */
export async function invoicePdf(deps: Dependencies, secret: string, fonts: () => PdfFonts, ifNoneMatch?: string): Promise<InvoicePdfFile | { pdf: null; key: string }> {
  const invoice = await invoiceBySecret(deps, secret);
  const view = await pdfViewOf(invoice);
  const key = createHash('sha256').update(PDF_LAYOUT).update(JSON.stringify(view)).digest('hex');
  if (ifNoneMatch === key) return { pdf: null, key };
  const filename = `${invoice._id}.pdf`;
  const cached = await InvoicePdf.findById(invoice._id).lean<InvoicePdfDoc>();
  if (cached && cached.key === key) return { pdf: storedBytes(cached.pdf), key, filename };
  const pdf = await renderInvoicePdf(view, fonts());
  await InvoicePdf.replaceOne({ _id: invoice._id }, { _id: invoice._id, key, pdf, created_at: new Date() }, { upsert: true });
  return { pdf, key, filename };
}

// ---- the console's side -----------------------------------------------------------------------

/**
 * Gives the invoice's hosted page and PDF a new secret: the old links answer 404 from then on.
 * Returns the new links. No event: the invoice itself did not change.
 */
export async function rotateInvoiceLinks(deps: Dependencies, scope: Scope, invoiceId: string): Promise<InvoiceDocumentUrls> {
  await findInvoice(scope, invoiceId);
  return invoiceDocumentUrls(deps.config.publicUrl, await rotateLinkSecret(deps, invoiceId));
}
