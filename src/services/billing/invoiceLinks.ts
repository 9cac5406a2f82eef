/**
 * Each invoice's unguessable links, `<PUBLIC_URL>/invoice/<secret>` (its hosted page) and
 * `<PUBLIC_URL>/invoice/<secret>/pdf` (its PDF), as the API and its events show them
 * (`hosted_invoice_url`, `invoice_pdf`, Stripe's names).
 *
 * The secret is derived (cryptography/invoiceLinkSecret.ts): the invoice id and an HMAC under the
 * deployment's stored key over the id and the link's generation. An invoice has generation 0
 * until its links are rotated, so a new invoice's links cost no write, and no read when it was
 * written just now. Rotation writes the link document (`invoice_links`, `_id` = the invoice id)
 * with the next generation; the invoice document itself is never written for its link (its
 * writers take turns, services/billing/invoiceWrites.ts). Links made before secrets were derived
 * (a random secret on the link document, found by a lookup keyed by its SHA-256) keep working
 * until rotated.
 */
import { isDuplicateKey } from '../../models/errors';
import type { InvoiceDoc } from '../../models/invoice';
import { Invoice } from '../../models/invoice';
import { InvoiceLink, InvoiceLinkDoc, InvoiceLinkSecret, InvoicePdf } from '../../models/invoiceDocument';
import { ApiError } from '../../lib/errors';
import { invoiceEventPayload, InvoiceDocumentUrls, presentInvoice } from '../../presenters/invoice';
import type { Dependencies } from '../../dependencies';
import { linkSecretKey } from '../crypto/paymentClaimLinks';
import { writeHeld } from '../writes/heldWrites';
import { invoiceIdOfLinkSecret, invoiceLinkSecret, isInvoiceLinkSecret } from '../../cryptography/invoiceLinkSecret';

/** The public paths of a secret (relative to PUBLIC_URL). */
export const hostedInvoicePath = (secret: string) => `/invoice/${encodeURIComponent(secret)}`;
export const invoicePdfPath = (secret: string) => `${hostedInvoicePath(secret)}/pdf`;

export function invoiceDocumentUrls(publicUrl: string, secret: string): InvoiceDocumentUrls {
  return { hosted_invoice_url: `${publicUrl}${hostedInvoicePath(secret)}`, invoice_pdf: `${publicUrl}${invoicePdfPath(secret)}` };
}

type LinkKeys = Pick<Dependencies, 'keys'>;

/** The current secret of an invoice whose link document (null: none, generation 0) is `link`. */
function currentSecret(key: string, invoiceId: string, link: InvoiceLinkDoc | null): string {
  // A random secret made before secrets were derived, until the link is rotated.
  if (link?.secret) return link.secret;
  return invoiceLinkSecret(key, invoiceId, link?.generation ?? 0);
}

/** An invoice's link document (by the driver: read for every invoice presented), or null before its first rotation. */
async function readLink(invoiceId: string): Promise<InvoiceLinkDoc | null> {
  return (await InvoiceLink.collection.findOne({ _id: invoiceId } as never)) as InvoiceLinkDoc | null;
}

/** The secret of `invoiceId`'s links. `isNew`: the invoice was written just now, so its link is at generation 0 (nothing to read). */
async function linkSecretOf(deps: LinkKeys, invoiceId: string, opts: { isNew?: boolean } = {}): Promise<string> {
  const key = await deps.keys.invoiceLinks();
  if (opts.isNew) return invoiceLinkSecret(key, invoiceId, 0);
  return currentSecret(key, invoiceId, await readLink(invoiceId));
}

/** The secrets of each invoice's links (by id). By `_id` one at a time: FerretDB answers `$in` by decoding the collection. */
export async function invoiceLinkSecrets(deps: LinkKeys, invoiceIds: readonly string[]): Promise<Map<string, string>> {
  const secrets = await Promise.all(invoiceIds.map((id) => linkSecretOf(deps, id)));
  return new Map(invoiceIds.map((id, n) => [id, secrets[n]]));
}

/** The API's invoice: the stored one with its links. */
export async function presentInvoiceWithLinks(deps: Dependencies, invoice: InvoiceDoc) {
  return presentInvoice(invoice, invoiceDocumentUrls(deps.config.publicUrl, await linkSecretOf(deps, invoice._id)));
}

export async function presentInvoicesWithLinks(deps: Dependencies, invoices: readonly InvoiceDoc[]) {
  const secrets = await invoiceLinkSecrets(deps, invoices.map((i) => i._id));
  return invoices.map((i) => presentInvoice(i, invoiceDocumentUrls(deps.config.publicUrl, secrets.get(i._id)!)));
}

/** The links of an invoice (`isNew`: written just now, see linkSecretOf), for a caller that presents it more than once. */
export async function invoiceUrls(deps: Dependencies, invoiceId: string, opts: { isNew?: boolean } = {}): Promise<InvoiceDocumentUrls> {
  return invoiceDocumentUrls(deps.config.publicUrl, await linkSecretOf(deps, invoiceId, opts));
}

/** An invoice event's payload, links included. */
export async function invoiceEvent(deps: Dependencies, invoice: InvoiceDoc) {
  return invoiceEventPayload(invoice, invoiceDocumentUrls(deps.config.publicUrl, await linkSecretOf(deps, invoice._id)));
}

/** The invoice `secret` opens, or null (unknown, rotated away, or its invoice deleted). */
export async function findInvoiceBySecret(deps: LinkKeys, secret: string): Promise<InvoiceDoc | null> {
  if (typeof secret !== 'string' || secret.length < 32 || secret.length > 100) return null;
  const invoiceId = invoiceIdOfLinkSecret(secret);
  if (invoiceId) {
    const link = await readLink(invoiceId);
    // Its current generation's secret only; an older random secret, while it is current, is the only one.
    if (link?.secret || !isInvoiceLinkSecret(await deps.keys.invoiceLinks(), secret, invoiceId, link?.generation ?? 0)) return null;
    return Invoice.findById(invoiceId).lean<InvoiceDoc>();
  }
  // A random secret made before secrets were derived.
  const ref = await InvoiceLinkSecret.findById(linkSecretKey(secret)).lean<{ invoice_id: string }>();
  const link = ref ? await InvoiceLink.findById(ref.invoice_id).lean<InvoiceLinkDoc>() : null;
  // The link names its one current secret: a lookup left by a rotation or a lost race opens nothing.
  if (!link || link.secret !== secret) return null;
  return Invoice.findById(link._id).lean<InvoiceDoc>();
}

export async function invoiceBySecret(deps: LinkKeys, secret: string): Promise<InvoiceDoc> {
  const invoice = await findInvoiceBySecret(deps, secret);
  if (!invoice) throw ApiError.notFound('Invoice not found', 'secret');
  return invoice;
}

/**
 * The next generation of an invoice's links: every earlier secret opens nothing from the write on
 * (a random one made before secrets were derived loses its lookup too). Rotations of one invoice
 * take turns. Returns the new secret.
 */
export async function rotateLinkSecret(deps: LinkKeys, invoiceId: string): Promise<string> {
  // The link document exists from the first rotation on (until then the invoice is at generation 0).
  const now = new Date();
  await InvoiceLink.collection.insertOne({ _id: invoiceId, generation: 0, write_version: 0, created_at: now, updated_at: now } as never).catch((err) => {
    if (!isDuplicateKey(err)) throw err;
  });
  const held = await writeHeld<InvoiceLinkDoc>(InvoiceLink, invoiceId, (link) => ({ generation: (link.generation ?? 0) + 1, secret: null }));
  if (held.result === 'missing') throw ApiError.notFound('Invoice not found', 'id');
  if (held.result !== 'written') throw ApiError.conflict('resource_changed', "The invoice's links changed while rotating; retry", 'id');
  if (held.before.secret) await InvoiceLinkSecret.deleteOne({ _id: linkSecretKey(held.before.secret) });
  return invoiceLinkSecret(await deps.keys.invoiceLinks(), invoiceId, held.after.generation ?? 0);
}

/** An invoice's links and its PDF go with it. */
export async function deleteInvoiceDocuments(invoiceId: string): Promise<void> {
  const link = await InvoiceLink.findById(invoiceId).lean<InvoiceLinkDoc>();
  if (link?.secret) await InvoiceLinkSecret.deleteOne({ _id: linkSecretKey(link.secret) });
  await InvoiceLink.deleteOne({ _id: invoiceId });
  await InvoicePdf.deleteOne({ _id: invoiceId });
}
