/**
 * What an invoice's customer-facing documents need stored: the generation of its links (its
 * hosted page `/invoice/<secret>` and its PDF `/invoice/<secret>/pdf`, the secret derived from it,
 * services/billing/invoiceLinks.ts) once rotated, and its last PDF. Kept apart from the invoice
 * document, which its writers take turns on (services/billing/invoiceWrites.ts).
 */
import { Schema, model, InferSchemaType } from 'mongoose';
import { timestamps } from './scope';

/**
 * `_id` = the invoice id, written by its first rotation (without one the invoice's links are at
 * generation 0). `write_version`: rotations take turns (services/writes/heldWrites.ts).
 */
const invoiceLinkSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** The links' generation: each rotation steps it, and the secret is derived from it. */
    generation: { type: Number, default: 0 },
    /**
     * A random secret (43 URL-safe characters) made before secrets were derived: the current one
     * until the first rotation, which clears it.
     */
    secret: { type: String, default: null },
    write_version: { type: Number, default: 0 },
  },
  { timestamps, versionKey: false },
);
export type InvoiceLinkDoc = InferSchemaType<typeof invoiceLinkSchema> & { _id: string; created_at: Date; updated_at: Date };
export const InvoiceLink = model('InvoiceLink', invoiceLinkSchema, 'invoice_links');

/** Secret -> invoice for the random secrets made before secrets were derived, keyed by `_id` = SHA-256(secret). */
const invoiceLinkSecretSchema = new Schema({ _id: { type: String, required: true }, invoice_id: { type: String, required: true } }, { versionKey: false });
export const InvoiceLinkSecret = model('InvoiceLinkSecret', invoiceLinkSecretSchema, 'invoice_link_secrets');

/**
 * The invoice's last PDF, `_id` = the invoice id, valid while `key` (a digest of everything the
 * PDF shows, the invoice's `updated_at` included) is the current one. In the database, so every
 * API process serves the one another made.
 */
const invoicePdfSchema = new Schema(
  {
    _id: { type: String, required: true },
    key: { type: String, required: true },
    pdf: { type: Buffer, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
export type InvoicePdfDoc = InferSchemaType<typeof invoicePdfSchema> & { _id: string };
export const InvoicePdf = model('InvoicePdf', invoicePdfSchema, 'invoice_pdfs');
