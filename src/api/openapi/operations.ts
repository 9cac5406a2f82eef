/**
 * Every operation under /v1 (and /api/v1), with the validators its route checks the body and the
 * query with. The OpenAPI document shows those validators' own schema objects, so the document
 * cannot describe another request than the one the route accepts; test/api/openapi.test.ts checks
 * that this list equals the routes the app registers and that each route calls these validators.
 */
import { pageQuery } from '../validation';
import { authBody } from '../auth/schema';
import { updateAccountBody } from '../accounts/routes';
import { createCustomerBody, updateCustomerBody } from '../customers/schema';
import { createProductBody, updateProductBody } from '../products/schema';
import { createPriceBody, updatePriceBody } from '../prices/schema';
import { createInvoiceBody, listInvoicesQuery, updateInvoiceBody } from '../invoices/schema';
import { createSubscriptionBody, updateSubscriptionBody } from '../subscriptions/schema';
import { createBody as createCryptoAddressBody } from '../cryptoAddresses/routes';
import { allocationBody, createBody as createCryptoTransactionBody } from '../cryptoTransactions/routes';
import { createBody as createPaymentClaimLinkBody } from '../paymentClaimLinks/routes';
import { listQuery as listPaymentClaimsQuery, rejectionBody } from '../paymentClaims/routes';
import { claimBody } from '../publicClaims/routes';
import { createWebhookEndpointBody, updateWebhookEndpointBody } from '../webhookEndpoints/schema';
import { monthRangeQuery, receivablesQuery } from '../reports/schema';

/** A validator of src/api/validation.ts: it carries the schema object it checks. */
export type SchemaValidator = ((data: unknown) => unknown) & { readonly schema: object };

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface Operation {
  method: HttpMethod;
  /** Relative to /v1, in the router's form (`/customers/:id`). */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Reachable without a token. */
  public?: boolean;
  body?: SchemaValidator;
  query?: SchemaValidator;
  /** The success answer: a component name, a list (`key` of `item` components), `null` for no body. */
  success: { status: number; description: string; schema: string | { list: string; item: string } | null | 'any'; csv?: boolean };
  /** Error statuses beyond those every operation of its kind can answer (see document.ts). */
  errors?: number[];
  /** `POST /v1/auth` answers its own failures in the simple `{error: string}` format. */
  simpleErrors?: boolean;
  params?: Record<string, string>;
}

const ID = { id: 'The resource id' };

function crud(
  tag: string,
  resource: string,
  component: string,
  listKey: string,
  opts: {
    create?: SchemaValidator;
    update?: SchemaValidator;
    updateMethod?: 'patch' | 'put';
    remove?: boolean;
    listQuery?: SchemaValidator;
    createSchema?: string;
    singular: string;
    errors?: Partial<Record<'list' | 'get' | 'create' | 'update' | 'delete', number[]>>;
    notes?: Partial<Record<'list' | 'get' | 'create' | 'update' | 'delete', string>>;
  },
): Operation[] {
  const base = `/${resource}`;
  const ops: Operation[] = [
    {
      method: 'get',
      path: base,
      operationId: `list_${resource}`,
      tag,
      summary: `List ${listKey.replace(/_/g, ' ')}`,
      description: opts.notes?.list,
      query: opts.listQuery ?? pageQuery,
      success: { status: 200, description: `A page of ${listKey}`, schema: { list: listKey, item: component } },
      errors: opts.errors?.list,
    },
    {
      method: 'get',
      path: `${base}/:id`,
      operationId: `get_${opts.singular.replace(/ /g, '_')}`,
      tag,
      summary: `Show a ${opts.singular}`,
      description: opts.notes?.get,
      params: ID,
      success: { status: 200, description: `The ${opts.singular}`, schema: component },
      errors: opts.errors?.get,
    },
  ];
  if (opts.create) {
    ops.push({
      method: 'post',
      path: base,
      operationId: `create_${opts.singular.replace(/ /g, '_')}`,
      tag,
      summary: `Create a ${opts.singular}`,
      description: opts.notes?.create,
      body: opts.create,
      success: { status: 201, description: `The new ${opts.singular}`, schema: opts.createSchema ?? component },
      errors: opts.errors?.create,
    });
  }
  if (opts.update) {
    ops.push({
      method: opts.updateMethod ?? 'patch',
      path: `${base}/:id`,
      operationId: `update_${opts.singular.replace(/ /g, '_')}`,
      tag,
      summary: `Update a ${opts.singular}`,
      description: opts.notes?.update,
      params: ID,
      body: opts.update,
      success: { status: 200, description: `The updated ${opts.singular}`, schema: component },
      errors: opts.errors?.update,
    });
  }
  if (opts.remove) {
    ops.push({
      method: 'delete',
      path: `${base}/:id`,
      operationId: `delete_${opts.singular.replace(/ /g, '_')}`,
      tag,
      summary: `Delete a ${opts.singular}`,
      description: opts.notes?.delete,
      params: ID,
      success: { status: 204, description: 'Deleted', schema: null },
      errors: opts.errors?.delete,
    });
  }
  return ops;
}

export const OPERATIONS: Operation[] = [
  {
    method: 'post',
    path: '/auth',
    operationId: 'authenticate',
    tag: 'Authentication',
    summary: 'Exchange email and password (and a TOTP code) for a new API token',
    description:
      'The only operation that answers errors in the simple format `{"error": "..."}`: 401 for a wrong email, password or ' +
      'two-factor code, 422 `otp_attempt_required` when two-factor is on and `otp_attempt` is missing.',
    public: true,
    simpleErrors: true,
    body: authBody,
    success: { status: 200, description: 'A new production token', schema: 'AuthToken' },
    errors: [401, 429, 503],
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'get_openapi_document',
    tag: 'Reference',
    summary: 'This OpenAPI 3.1 document',
    public: true,
    success: { status: 200, description: 'The OpenAPI document', schema: 'any' },
  },
  {
    method: 'get',
    path: '/me',
    operationId: 'get_me',
    tag: 'Authentication',
    summary: 'The user, account, scope and token of the request',
    success: { status: 200, description: 'The current user', schema: 'Me' },
  },
  {
    method: 'get',
    path: '/accounts',
    operationId: 'list_accounts',
    tag: 'Accounts',
    summary: "List the user's accounts",
    query: pageQuery,
    success: { status: 200, description: 'A page of accounts', schema: { list: 'accounts', item: 'Account' } },
  },
  {
    method: 'get',
    path: '/accounts/:id',
    operationId: 'get_account',
    tag: 'Accounts',
    summary: 'Show an account',
    params: ID,
    success: { status: 200, description: 'The account', schema: 'Account' },
  },
  {
    method: 'patch',
    path: '/accounts/:id',
    operationId: 'rename_account',
    tag: 'Accounts',
    summary: 'Rename an account',
    description: '409 `resource_changed` if a new sandbox was being added to the account at the same moment (retry).',
    params: ID,
    body: updateAccountBody,
    errors: [409],
    success: { status: 200, description: 'The account', schema: 'Account' },
  },
  ...crud('Customers', 'customers', 'Customer', 'customers', {
    singular: 'customer',
    create: createCustomerBody,
    update: updateCustomerBody,
    remove: true,
    notes: {
      create: 'Also creates the customer\'s wallet. `email` is lowercased and unique within the account and scope.',
      delete: 'Also deletes the customer\'s wallet, its crypto addresses and payment claim links.',
    },
  }),
  ...crud('Products', 'products', 'Product', 'products', {
    singular: 'product',
    create: createProductBody,
    update: updateProductBody,
    remove: true,
    notes: { delete: 'Also deletes the product\'s prices (and what they take with them).' },
  }),
  ...crud('Prices', 'prices', 'Price', 'prices', {
    singular: 'price',
    create: createPriceBody,
    update: updatePriceBody,
    remove: true,
    notes: {
      create: '`amount` in cents. Omit `recurring` (or send `null` or `false`) for a one-time price.',
      update: 'Only `active` can change after creation; naming `amount`, `product_id` or `recurring` is a 422.',
      delete: 'Also deletes the subscriptions and invoice lines that use it.',
    },
  }),
  ...crud('Wallets', 'wallets', 'Wallet', 'wallets', { singular: 'wallet' }),
  ...crud('Invoices', 'invoices', 'Invoice', 'invoices', {
    singular: 'invoice',
    create: createInvoiceBody,
    update: updateInvoiceBody,
    remove: true,
    listQuery: listInvoicesQuery,
    errors: { update: [409] },
    notes: {
      update: 'Any of the four statuses may be set, except that a `canceled` invoice cannot change again. A concurrent payment answers 409 `invoice_changed`.',
    },
  }),
  ...crud('Subscriptions', 'subscriptions', 'Subscription', 'subscriptions', {
    singular: 'subscription',
    create: createSubscriptionBody,
    update: updateSubscriptionBody,
    remove: true,
    errors: { update: [409], delete: [409] },
    notes: {
      create: 'Phases must not overlap, leave no gaps, and have items of one interval each. A phase may start at most 366 days in the past.',
      update: 'Only `proration_behavior` and `billing_cycle_anchor` can change; later charges follow the new settings. 409 `resource_changed` if the subscription\'s own billing kept it busy (retry).',
      delete: 'Cancels (no further billing) and deletes it; its invoices stay. 409 `resource_changed` if the subscription\'s own billing kept it busy (retry).',
    },
  }),
  {
    method: 'get',
    path: '/subscriptions/:id/timeline',
    operationId: 'get_subscription_timeline',
    tag: 'Subscriptions',
    summary: "A subscription's history, oldest first",
    params: ID,
    success: { status: 200, description: 'The timeline', schema: 'SubscriptionTimeline' },
  },
  {
    method: 'get',
    path: '/reports/mrr',
    operationId: 'get_mrr_report',
    tag: 'Reports',
    summary: 'Monthly recurring revenue at each month end, and its movements',
    description:
      'MRR from the phases in force at each month end, normalised to a month (yearly / 12, weekly x 52 / 12, daily x 365 / 12), ' +
      'overrides and quantities applied. Movements are signed: `starting_mrr` plus new, expansion, contraction (negative) and ' +
      'churned (negative) is `mrr`. `from` and `to` are months (`YYYY-MM`), the 12 months ending with the current one by default, ' +
      'at most 120. ' +
      'Served from a rollup rebuilt a few seconds after each write that changes it; until then computed from every document, ' +
      'so the answer is never stale. ' +
      '`Accept: text/csv` answers CSV.',
    query: monthRangeQuery,
    success: { status: 200, description: 'One row per month', schema: 'MrrReport', csv: true },
  },
  {
    method: 'get',
    path: '/reports/receivables',
    operationId: 'get_receivables_report',
    tag: 'Reports',
    summary: 'Open and overdue invoices in aging buckets',
    description:
      'Open invoices (`pending`, `overdue`) created by `as_of` (a day, today by default), by days past due on that day: current, ' +
      '1-30, 31-60, 61-90, over 90. Amounts are balances (total less what was applied). Each bucket lists at most 1,000 invoices ' +
      '(`invoices_truncated`). ' +
      'Served from a rollup rebuilt a few seconds after each write that changes it; until then computed from every document, ' +
      'so the answer is never stale. `Accept: text/csv` answers every invoice as CSV.',
    query: receivablesQuery,
    success: { status: 200, description: 'The aging', schema: 'ReceivablesReport', csv: true },
  },
  {
    method: 'get',
    path: '/reports/collections',
    operationId: 'get_collections_report',
    tag: 'Reports',
    summary: 'What was paid, per month, currency and source',
    description:
      'Crypto transactions by the month of their timestamp, at the USD value they were allocated at, told apart by source ' +
      '(`blockchain`: detected on chain; `manual_entry`: entered by hand or an approved claim), and invoices marked paid by hand ' +
      'with no crypto applied (`invoice_marked_paid`, in USD). `unallocated_credit` is the credit left per customer. ' +
      'Served from a rollup rebuilt a few seconds after each write that changes it; until then computed from every document, ' +
      'so the answer is never stale. ' +
      '`Accept: text/csv` answers the rows as CSV.',
    query: monthRangeQuery,
    success: { status: 200, description: 'Rows per month, currency and source', schema: 'CollectionsReport', csv: true },
  },
  ...crud('Crypto addresses', 'crypto_addresses', 'CryptoAddress', 'crypto_addresses', {
    singular: 'crypto address',
    create: createCryptoAddressBody,
    remove: true,
    notes: {
      create: '`currency` is accepted as an alias of `currency_code`. The address must be valid for its currency and unique per currency in the scope.',
      delete: 'Also deletes the payment claims and transactions recorded on it.',
    },
  }),
  ...crud('Crypto transactions', 'crypto_transactions', 'CryptoTransaction', 'crypto_transactions', {
    singular: 'crypto transaction',
    create: createCryptoTransactionBody,
    errors: { create: [502] },
    notes: {
      list: 'Newest first by `timestamp`.',
      create: 'Records a transaction by hand (`transaction_source` `manual_entry`); it is then allocated to the customer\'s open invoices.',
    },
  }),
  {
    method: 'post',
    path: '/crypto_transactions/:id/allocations',
    operationId: 'allocate_crypto_transaction',
    tag: 'Crypto transactions',
    summary: 'Apply (part of) a transaction to an invoice by hand',
    description: '`amount_applied` defaults to the smaller of the unallocated credit and the invoice balance. 409 `allocation_in_progress` while automatic allocation has not finished.',
    params: ID,
    body: allocationBody,
    success: { status: 201, description: 'The transaction with its allocations', schema: 'CryptoTransaction' },
    errors: [409, 502],
  },
  ...crud('Payment claim links', 'payment_claim_links', 'PaymentClaimLink', 'payment_claim_links', {
    singular: 'payment claim link',
    create: createPaymentClaimLinkBody,
    remove: true,
    notes: { create: '`expires_at` defaults to 24 hours from now, `max_uses` to 1. Share `link` with the customer.' },
  }),
  ...crud('Payment claims', 'crypto_payment_claims', 'PaymentClaim', 'crypto_payment_claims', {
    singular: 'payment claim',
    listQuery: listPaymentClaimsQuery,
  }),
  {
    method: 'post',
    path: '/crypto_payment_claims/:id/approval',
    operationId: 'approve_payment_claim',
    tag: 'Payment claims',
    summary: 'Approve a pending claim: records its crypto transaction',
    params: ID,
    success: { status: 200, description: 'The approved claim', schema: 'PaymentClaim' },
    errors: [502],
  },
  {
    method: 'post',
    path: '/crypto_payment_claims/:id/rejection',
    operationId: 'reject_payment_claim',
    tag: 'Payment claims',
    summary: 'Reject a pending claim',
    description: 'A blank or missing `reason` becomes `No reason provided`.',
    params: ID,
    body: rejectionBody,
    success: { status: 200, description: 'The rejected claim', schema: 'PaymentClaim' },
  },
  {
    method: 'get',
    path: '/public/payment_claim_links/:secret',
    operationId: 'get_public_payment_claim_link',
    tag: 'Public payment pages',
    summary: "The customer's view of a payment claim link",
    description:
      'No token: the secret of the link is the credential. Rate-limited per client IP. The pay page polls it for `payment_status` and a refreshed estimate. A used or expired link answers its status only.',
    public: true,
    params: { secret: 'The secret part of the link (`<PUBLIC_URL>/pay/<secret>`)' },
    success: { status: 200, description: 'What to pay, where, and where the payment stands', schema: 'PublicPaymentClaimLink' },
  },
  {
    method: 'post',
    path: '/public/payment_claim_links/:secret/claims',
    operationId: 'submit_payment_claim',
    tag: 'Public payment pages',
    summary: 'Submit a payment claim through a link',
    description:
      'No token. `verification` is the solved proof-of-work challenge (base64 of the ALTCHA payload) unless verification is off. ' +
      'An unusable link is a 422 on `secret`; a failed challenge a 422 `verification_failed`.',
    public: true,
    params: { secret: 'The secret part of the link' },
    body: claimBody,
    success: { status: 201, description: 'The pending claim', schema: 'PaymentClaim' },
  },
  {
    method: 'get',
    path: '/public/invoices/:secret',
    operationId: 'get_public_invoice',
    tag: 'Public payment pages',
    summary: "The customer's view of an invoice",
    description:
      "No token: the secret of the invoice's links (`hosted_invoice_url`, `invoice_pdf`) is the credential. Rate-limited per client IP. " +
      'The hosted page polls it for `payment_status` and a refreshed estimate. `amount_due` is what settles the invoice: a payment pays the oldest open invoice first, so it adds the balances of older open invoices (`invoices`).',
    public: true,
    params: { secret: 'The secret part of the links (`<PUBLIC_URL>/invoice/<secret>`)' },
    success: { status: 200, description: 'The invoice, what settles it, and where to pay', schema: 'PublicInvoice' },
  },
  ...crud('Webhook endpoints', 'webhook_endpoints', 'WebhookEndpoint', 'webhook_endpoints', {
    singular: 'webhook endpoint',
    create: createWebhookEndpointBody,
    createSchema: 'WebhookEndpointWithSecret',
    update: updateWebhookEndpointBody,
    updateMethod: 'put',
    remove: true,
    errors: { update: [409] },
    notes: {
      create: 'The answer is the only one, with regenerate_secret, that shows the full `signing_secret`.',
      update: '409 `resource_changed` if an automatic disable was being written at the same moment (retry).',
      delete: 'Also deletes its deliveries.',
    },
  }),
  {
    method: 'post',
    path: '/webhook_endpoints/:id/regenerate_secret',
    operationId: 'regenerate_webhook_secret',
    tag: 'Webhook endpoints',
    summary: 'Replace the signing secret (the old one stops at once)',
    description: '409 `resource_changed` if an automatic disable was being written at the same moment (retry).',
    params: ID,
    errors: [409],
    success: { status: 200, description: 'The endpoint with its new full secret', schema: 'WebhookEndpointWithSecret' },
  },
  {
    method: 'get',
    path: '/webhook_endpoints/:id/events',
    operationId: 'list_webhook_deliveries',
    tag: 'Webhook endpoints',
    summary: "The endpoint's deliveries, newest first, with every attempt",
    params: ID,
    query: pageQuery,
    success: { status: 200, description: 'A page of deliveries', schema: { list: 'webhook_events', item: 'WebhookDelivery' } },
  },
  {
    method: 'post',
    path: '/webhook_endpoints/:id/events/:event_id/redeliver',
    operationId: 'redeliver_webhook_event',
    tag: 'Webhook endpoints',
    summary: 'Deliver an event to the endpoint again',
    params: { id: 'The endpoint id', event_id: 'The event id (`evt_...`)' },
    success: { status: 201, description: 'The new delivery', schema: 'WebhookDelivery' },
  },
];
