/**
 * Payment claim links, the merchant's side: a secret URL (`<PUBLIC_URL>/pay/<secret>`) through
 * which a customer submits a payment claim. Active until used up (`max_uses`) or past
 * `expires_at`; one workflow per link marks it expired at `expires_at`. The public side is in
 * publicPaymentClaimLinks.ts, claim submission in paymentClaimSubmission.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { PaymentClaimLink, PaymentClaimLinkDoc, PaymentClaimLinkSecret } from '../../models/paymentClaimLink';
import { Price, PriceDoc } from '../../models/price';
import { Scope, scopeFilter, findInScope } from '../../models/scope';
import { newId, ID_PREFIX } from '../../lib/ids';
import { CreateOptions, createdId, earlierAttempt } from '../writes/creation';
import { ApiError } from '../../lib/errors';
import { parseDateTime } from '../../lib/dates';
import { presentPaymentClaimLink } from '../../presenters/paymentClaimLink';
import { createListed, listScopePage, recountListSlots } from '../writes/listing';
import { findCustomer } from '../billing/customers';
import type { Dependencies } from '../../dependencies';
import { writeHeld } from '../writes/heldWrites';


const DAY_MS = 24 * 60 * 60 * 1000;

export interface PaymentClaimLinkInput {
  customer_id: string;
  expires_at?: string;
  max_uses?: number;
  metadata?: string | null;
  price_id?: string | null;
}

/** The secret's key in `payment_claim_link_secrets`: its hash, so the stored index does not hold the secret. */
export const linkSecretKey = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** 32 random bytes, base64url: 43 URL-safe characters. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

async function findLink(scope: Scope, id: string): Promise<PaymentClaimLinkDoc> {
  const link = await findInScope<PaymentClaimLinkDoc>(PaymentClaimLink, scope, id);
  if (!link) throw ApiError.notFound('Payment claim link not found', 'id');
  return link;
}

/** PUBLIC_URL from config: the base of the link's `url`. */
const present = (deps: Dependencies, l: PaymentClaimLinkDoc) => presentPaymentClaimLink(l, deps.config.publicUrl);

/**
 * Under an Idempotency-Key (services/writes/creation.ts), a retry after a request that died after its
 * write gets that link; its expiry workflow's start was recorded before the write.
 */
export async function createPaymentClaimLink(deps: Dependencies, scope: Scope, input: PaymentClaimLinkInput, opts: CreateOptions = {}) {
  const id = createdId(ID_PREFIX.paymentClaimLink, opts);
  const earlier = await earlierAttempt<PaymentClaimLinkDoc>(PaymentClaimLink, scope, id, opts);
  if (earlier) return present(deps, earlier);
  await findCustomer(scope, input.customer_id, 'customer_id');
  const maxUses = input.max_uses ?? 1;
  if (!Number.isInteger(maxUses) || maxUses <= 0) throw ApiError.invalid('Max uses must be greater than 0', 'max_uses', { max_uses: ['must be greater than 0'] });
  let expiresAt = new Date(Date.now() + DAY_MS);
  if (input.expires_at !== undefined) {
    expiresAt = parseDateTime(input.expires_at, 'expires_at');
    if (expiresAt.getTime() <= Date.now()) throw ApiError.validation('expires_at', 'must be in the future');
  }
  if (input.price_id) {
    const price = await findInScope<PriceDoc>(Price, scope, input.price_id);
    if (!price) throw ApiError.notFound(`Price not found: ${input.price_id}`, 'price_id');
  }
  const secret = newSecret();
  // Recorded before the link, so a crash between the two cannot lose its expiry workflow.
  const workflow = await deps.workflows.claimLink.plan({ _id: id, expires_at: expiresAt });
  await PaymentClaimLinkSecret.create({ _id: linkSecretKey(secret), link_id: id });
  const link = (
    await createListed(PaymentClaimLink, scope, {
      _id: id,
      ...scopeFilter(scope),
      customer_id: input.customer_id,
      status: 'active',
      secret,
      expires_at: expiresAt,
      max_uses: maxUses,
      use_count: 0,
      metadata: input.metadata ?? null,
      price_id: input.price_id ?? null,
    })
  ).toObject() as PaymentClaimLinkDoc;
  await workflow.start();
  return present(deps, link);
}

export async function getPaymentClaimLink(deps: Dependencies, scope: Scope, id: string) {
  return present(deps, await findLink(scope, id));
}

export async function listPaymentClaimLinks(deps: Dependencies, scope: Scope, page: number) {
  const { items, pagination } = await listScopePage<PaymentClaimLinkDoc>(PaymentClaimLink, scope, page);
  return { payment_claim_links: items.map((l) => present(deps, l)), pagination };
}

/** Removes a link (its secret first, so `/pay/<secret>` answers 404 at once) and ends its workflow. */
async function removeLink(deps: Dependencies, link: PaymentClaimLinkDoc): Promise<void> {
  await PaymentClaimLinkSecret.deleteOne({ _id: linkSecretKey(link.secret) });
  await PaymentClaimLink.deleteOne({ _id: link._id });
  await recountListSlots(PaymentClaimLink, [link]);
  await deps.workflows.claimLink.close(link._id);
}

export async function deletePaymentClaimLink(deps: Dependencies, scope: Scope, id: string): Promise<void> {
  await removeLink(deps, await findLink(scope, id));
}

/** Customer deletion: every link of the customer goes, the same way as deleting each one. */
export async function deleteCustomerPaymentClaimLinks(deps: Dependencies, scope: Scope, customerId: string): Promise<void> {
  const links = await PaymentClaimLink.find({ ...scopeFilter(scope), customer_id: customerId }).lean<PaymentClaimLinkDoc[]>();
  for (const link of links) await removeLink(deps, link);
}

/** The workflow's activity at `expires_at`: active -> expired. True when the link is expired. */
export async function expirePaymentClaimLink(linkId: string): Promise<boolean> {
  const link = await PaymentClaimLink.findById(linkId).lean<PaymentClaimLinkDoc>();
  if (!link) return false;
  if (link.status !== 'active') return link.status === 'expired';
  // Held like a submission's write, so neither puts back what the other wrote.
  const held = await writeHeld<PaymentClaimLinkDoc>(PaymentClaimLink, linkId, (doc) => (doc.status === 'active' ? { status: 'expired' } : null), { seen: link, seenWhole: true });
  if (held.result === 'busy') throw new Error(`payment claim link ${linkId} stayed held; the expiry is retried`);
  return held.result === 'written' || (held.result === 'unchanged' && held.before.status === 'expired');
}
