/** The derived secret of an invoice's links (src/cryptography/invoiceLinkSecret.ts): pure. */
import { invoiceIdOfLinkSecret, invoiceLinkSecret, isInvoiceLinkSecret } from '../../src/cryptography/invoiceLinkSecret';

const KEY = 'a'.repeat(64);
const OTHER_KEY = 'b'.repeat(64);
const INVOICE = 'inv_Q2vHq0c1m1b7e9s3XyZ4abcd';

describe('invoice link secrets', () => {
  it('names its invoice and opens only that invoice, at that generation, under that key', () => {
    const secret = invoiceLinkSecret(KEY, INVOICE, 0);
    expect(secret).toMatch(/^inv_Q2vHq0c1m1b7e9s3XyZ4abcd\.[A-Za-z0-9_-]{43}$/);
    expect(invoiceIdOfLinkSecret(secret)).toBe(INVOICE);
    expect(isInvoiceLinkSecret(KEY, secret, INVOICE, 0)).toBe(true);
    expect(isInvoiceLinkSecret(KEY, secret, INVOICE, 1)).toBe(false);
    expect(isInvoiceLinkSecret(OTHER_KEY, secret, INVOICE, 0)).toBe(false);
    expect(isInvoiceLinkSecret(KEY, secret, 'inv_other', 0)).toBe(false);
  });

  it('is the same for the same inputs and differs per generation and per invoice', () => {
    expect(invoiceLinkSecret(KEY, INVOICE, 3)).toBe(invoiceLinkSecret(KEY, INVOICE, 3));
    expect(new Set([invoiceLinkSecret(KEY, INVOICE, 0), invoiceLinkSecret(KEY, INVOICE, 1), invoiceLinkSecret(KEY, 'inv_2', 0)]).size).toBe(3);
  });

  it('refuses anything else: a changed character, the MAC moved to another invoice, other shapes', () => {
    const secret = invoiceLinkSecret(KEY, INVOICE, 0);
    const mac = secret.split('.')[1];
    const flipped = `${INVOICE}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect(isInvoiceLinkSecret(KEY, flipped, INVOICE, 0)).toBe(false);
    // The last character's two unused bits: another spelling of the same bytes is refused too.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = `${secret.slice(0, -1)}${alphabet[alphabet.indexOf(secret.slice(-1)) ^ 1]}`;
    expect(Buffer.from(respelled.split('.')[1], 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    expect(isInvoiceLinkSecret(KEY, respelled, INVOICE, 0)).toBe(false);
    expect(isInvoiceLinkSecret(KEY, `inv_other.${mac}`, 'inv_other', 0)).toBe(false);
    for (const s of ['', 'x'.repeat(43), `${INVOICE}.${mac}.x`, `${INVOICE}.short`, `../${INVOICE}.${mac}`, `${'i'.repeat(65)}.${mac}`]) {
      expect(invoiceIdOfLinkSecret(s)).toBeNull();
    }
  });
});
