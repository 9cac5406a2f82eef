/**
 * The collections listed in creation order through bucketed pages (src/services/writes/listing.ts),
 * and their start-up backfill for documents written before buckets existed.
 */
import type { Model } from 'mongoose';
import { Customer } from '../../models/customer';
import { Product } from '../../models/product';
import { Price } from '../../models/price';
import { Invoice } from '../../models/invoice';
import { Subscription } from '../../models/subscription';
import { Wallet } from '../../models/wallet';
import { CryptoAddress } from '../../models/cryptoAddress';
import { PaymentClaimLink } from '../../models/paymentClaimLink';
import { WebhookEndpoint } from '../../models/webhookEndpoint';
import { backfillListSlots } from './listing';

export const LISTED_MODELS: ReadonlyArray<Model<any>> = [Customer, Product, Price, Invoice, Subscription, Wallet, CryptoAddress, PaymentClaimLink, WebhookEndpoint];

/** Run at every start (API and worker): one read by `_id` per collection once done. */
export function backfillListedCollections(): Promise<number> {
  return backfillListSlots(LISTED_MODELS);
}
