/**
 * What an invoice's customer-facing documents need stored: the secret of its links (its hosted
 * page `/invoice/<secret>` and its PDF `/invoice/<secret>/pdf`), stored as the payment claim
 * links store theirs (the secret on the link, a lookup keyed by its SHA-256), and its last PDF.
 * Kept apart from the invoice document, which its writers take turns on (services/billing/invoiceWrites.ts).
 */
import { Schema, model, InferSchemaType } from 'mongoose';
import { timestamps } from './scope';

/**
 * One per invoice, `_id` = the invoice id: its first reader inserts it, and an insert on `_id` is
 * atomic, so concurrent first readers end up with one secret. `write_version`: rotations take
 * turns (services/writes/heldWrites.ts).
 */
const invoiceLinkSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** 43 URL-safe characters (32 random bytes), as a payment claim link's. */
    secret: { type: String, required: true },
    write_version: { type: Number, default: 0 },
  },
  { timestamps, versionKey: false },
);
export type InvoiceLinkDoc = InferSchemaType<typeof invoiceLinkSchema> & { _id: string; created_at: Date; updated_at: Date };
export const InvoiceLink = model('InvoiceLink', invoiceLinkSchema, 'invoice_links');

/** Secret -> invoice, keyed by `_id` = SHA-256(secret): the public routes read by `_id` alone. */
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
