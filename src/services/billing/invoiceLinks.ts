/**
 * Each invoice's unguessable links, `<PUBLIC_URL>/invoice/<secret>` (its hosted page) and
 * `<PUBLIC_URL>/invoice/<secret>/pdf` (its PDF), as the API and its events show them
 * (`hosted_invoice_url`, `invoice_pdf`, Stripe's names).
 *
 * A link is made on the invoice's first read, not by a pass at start-up: invoices made before
 * links existed get theirs the same way, without a start-up pass over every invoice that each
 * API process would run, and without writing the invoice document (its writers take turns,
 * services/billing/invoiceWrites.ts). The link's insert on `_id` = the invoice id is atomic, so readers
 * racing on a new invoice all end up with the secret of the one insert that won.
 */
import { isDuplicateKey } from '../../models/errors';
import type { InvoiceDoc } from '../../models/invoice';
import { Invoice } from '../../models/invoice';
import { InvoiceLink, InvoiceLinkDoc, InvoiceLinkSecret, InvoicePdf } from '../../models/invoiceDocument';
import { ApiError } from '../../lib/errors';
import { invoiceEventPayload, InvoiceDocumentUrls, presentInvoice } from '../../presenters/invoice';
import type { Dependencies } from '../../dependencies';
import { linkSecretKey, newSecret } from '../crypto/paymentClaimLinks';
import { writeHeld } from '../writes/heldWrites';

/** The public paths of a secret (relative to PUBLIC_URL). */
export const hostedInvoicePath = (secret: string) => `/invoice/${encodeURIComponent(secret)}`;
export const invoicePdfPath = (secret: string) => `${hostedInvoicePath(secret)}/pdf`;

export function invoiceDocumentUrls(publicUrl: string, secret: string): InvoiceDocumentUrls {
  return { hosted_invoice_url: `${publicUrl}${hostedInvoicePath(secret)}`, invoice_pdf: `${publicUrl}${invoicePdfPath(secret)}` };
}

/**
 * The secret of `invoiceId`'s links, made now if it has none (see the top of this file).
 * `isNew`: the invoice was written just now, so it has none yet and the lookup is skipped (had
 * one been left behind, the insert below finds it).
 */
async function ensureLinkSecret(invoiceId: string, opts: { isNew?: boolean } = {}): Promise<string> {
  if (!opts.isNew) {
    const existing = await InvoiceLink.findById(invoiceId).lean<InvoiceLinkDoc>();
    if (existing) return existing.secret;
  }
  const secret = newSecret();
  // The lookup first, as claim links do: the link never names a secret nothing can find.
  await InvoiceLinkSecret.create({ _id: linkSecretKey(secret), invoice_id: invoiceId });
  try {
    await InvoiceLink.create({ _id: invoiceId, secret });
    return secret;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    // Another reader made it first: theirs is the secret; ours opens nothing (the link does not name it).
    await InvoiceLinkSecret.deleteOne({ _id: linkSecretKey(secret) });
    const winner = await InvoiceLink.findById(invoiceId).lean<InvoiceLinkDoc>();
    if (!winner) throw new Error(`invoice link ${invoiceId} vanished while being made`);
    return winner.secret;
  }
}

/** The links of each invoice (by id), made for those that have none. By `_id` one at a time: FerretDB answers `$in` by decoding the collection. */
export async function invoiceLinkSecrets(invoiceIds: readonly string[]): Promise<Map<string, string>> {
  const secrets = await Promise.all(invoiceIds.map((id) => ensureLinkSecret(id)));
  return new Map(invoiceIds.map((id, n) => [id, secrets[n]]));
}

/** The API's invoice: the stored one with its links. */
export async function presentInvoiceWithLinks(deps: Dependencies, invoice: InvoiceDoc) {
  return presentInvoice(invoice, invoiceDocumentUrls(deps.config.publicUrl, await ensureLinkSecret(invoice._id)));
}

export async function presentInvoicesWithLinks(deps: Dependencies, invoices: readonly InvoiceDoc[]) {
  const secrets = await invoiceLinkSecrets(invoices.map((i) => i._id));
  return invoices.map((i) => presentInvoice(i, invoiceDocumentUrls(deps.config.publicUrl, secrets.get(i._id)!)));
}

/** The links of an invoice (`isNew`: written just now, see ensureLinkSecret), for a caller that presents it more than once. */
export async function invoiceUrls(deps: Dependencies, invoiceId: string, opts: { isNew?: boolean } = {}): Promise<InvoiceDocumentUrls> {
  return invoiceDocumentUrls(deps.config.publicUrl, await ensureLinkSecret(invoiceId, opts));
}

/** An invoice event's payload, links included. */
export async function invoiceEvent(deps: Dependencies, invoice: InvoiceDoc) {
  return invoiceEventPayload(invoice, invoiceDocumentUrls(deps.config.publicUrl, await ensureLinkSecret(invoice._id)));
}

/** The invoice `secret` opens, or null (unknown, rotated away, or its invoice deleted). */
export async function findInvoiceBySecret(secret: string): Promise<InvoiceDoc | null> {
  if (typeof secret !== 'string' || secret.length < 32 || secret.length > 100) return null;
  const ref = await InvoiceLinkSecret.findById(linkSecretKey(secret)).lean<{ invoice_id: string }>();
  const link = ref ? await InvoiceLink.findById(ref.invoice_id).lean<InvoiceLinkDoc>() : null;
  // The link names its one current secret: a lookup left by a rotation or a lost race opens nothing.
  if (!link || link.secret !== secret) return null;
  return Invoice.findById(link._id).lean<InvoiceDoc>();
}

export async function invoiceBySecret(secret: string): Promise<InvoiceDoc> {
  const invoice = await findInvoiceBySecret(secret);
  if (!invoice) throw ApiError.notFound('Invoice not found', 'secret');
  return invoice;
}

/**
 * A new secret for an invoice's links; the old one opens nothing from the write on (the link
 * names the new one) and its lookup goes. Rotations of one invoice take turns. Returns the new secret.
 */
export async function rotateLinkSecret(invoiceId: string): Promise<string> {
  await ensureLinkSecret(invoiceId);
  const secret = newSecret();
  await InvoiceLinkSecret.create({ _id: linkSecretKey(secret), invoice_id: invoiceId });
  const held = await writeHeld<InvoiceLinkDoc>(InvoiceLink, invoiceId, () => ({ secret }));
  if (held.result !== 'written') {
    await InvoiceLinkSecret.deleteOne({ _id: linkSecretKey(secret) });
    if (held.result === 'missing') throw ApiError.notFound('Invoice not found', 'id');
    throw ApiError.conflict('resource_changed', "The invoice's links changed while rotating; retry", 'id');
  }
  await InvoiceLinkSecret.deleteOne({ _id: linkSecretKey(held.before.secret) });
  return secret;
}

/** An invoice's links and its PDF go with it. */
export async function deleteInvoiceDocuments(invoiceId: string): Promise<void> {
  const link = await InvoiceLink.findById(invoiceId).lean<InvoiceLinkDoc>();
  if (link) await InvoiceLinkSecret.deleteOne({ _id: linkSecretKey(link.secret) });
  await InvoiceLink.deleteOne({ _id: invoiceId });
  await InvoicePdf.deleteOne({ _id: invoiceId });
}
