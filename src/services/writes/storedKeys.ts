/**
 * Keys a deployment makes for itself: generated once, stored, and the same in every process on
 * the database (the first insert wins; the others read it). A stored key never changes, so a
 * process reads each one once (`StoredKeys`, built at start-up with the other dependencies).
 */
import type { Model } from 'mongoose';
import { randomBytes } from 'node:crypto';
import { isDuplicateKey } from '../../models/errors';
import { StoredKey } from '../../models/storedKey';

/** The key stored as `id` in `model`'s collection, made now if there is none. */
export async function storedKey(model: Model<any>, id: string): Promise<string> {
  const stored = await model.findById(id).lean<{ key: string }>();
  if (stored) return stored.key;
  try {
    await model.create({ _id: id, key: randomBytes(32).toString('hex'), created_at: new Date() });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  return (await model.findById(id).lean<{ key: string }>())!.key;
}

/** This process's stored keys, each read once (a failed read is tried again on the next call). */
export class StoredKeys {
  private readonly read = new Map<string, Promise<string>>();

  private once(id: string): Promise<string> {
    let key = this.read.get(id);
    if (!key) {
      key = storedKey(StoredKey, id);
      key.catch(() => this.read.delete(id));
      this.read.set(id, key);
    }
    return key;
  }

  /** The HMAC key of invoice links (cryptography/invoiceLinkSecret.ts). */
  invoiceLinks(): Promise<string> {
    return this.once('invoice_link_hmac_key');
  }
}
