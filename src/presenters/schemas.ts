/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses) of what the presenters render, one per resource.
 * The OpenAPI document publishes them as its response shapes; every object is closed
 * (`additionalProperties: false`) so a field added to a presenter without its schema fails
 * test/api/openapi.test.ts and the contract run (schemathesis checks every response).
 */
import { INVOICE_STATUSES } from '../models/invoice';
import { PRORATION_BEHAVIORS, SUBSCRIPTION_STATUSES } from '../models/subscription';
import { CLAIM_STATUSES } from '../models/paymentClaim';
import { LINK_STATUSES } from '../models/paymentClaimLink';
import { TRANSACTION_SOURCES } from '../models/cryptoTransaction';
import { PAYMENT_STATES } from '../cryptocurrency/paymentStatus';
import { AGING_BUCKETS } from '../billing/receivables';
import { COLLECTION_SOURCES } from '../billing/collections';

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const bool: Schema = { type: 'boolean' };
const timestamp: Schema = { type: 'string', format: 'date-time' };
const date: Schema = { type: 'string', format: 'date', description: '`YYYY-MM-DD`' };
const money: Schema = { type: 'string', pattern: '^-?[0-9]+\\.[0-9]{2}$', description: 'Decimal string in USD, two decimals' };
const decimal: Schema = { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$', description: 'Decimal string' };
const cryptoAmount: Schema = { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'Decimal string in coin units, precision as given' };
const currency: Schema = { type: 'string', enum: ['BTC', 'ETH'] };

function nullable(s: Schema): Schema {
  const type = s.type as string;
  const out: Schema = { ...s, type: [type, 'null'] };
  if (Array.isArray(s.enum)) out.enum = [...(s.enum as unknown[]), null];
  return out;
}

/** A closed object; every property required unless named in `optional`. */
function obj(properties: Record<string, Schema>, optional: string[] = [], extra: Schema = {}): Schema {
  return {
    type: 'object',
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    properties,
    additionalProperties: false,
    ...extra,
  };
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const times = { created_at: timestamp, updated_at: timestamp };

export const Pagination = obj(
  { page: { type: 'integer', minimum: 1 }, pages: { type: 'integer', minimum: 0 }, count: { type: 'integer', minimum: 0 } },
  [],
  { description: '25 items a page; `pages` and `count` are 0 for an empty list.' },
);

export const Customer = obj({
  id: str,
  email: str,
  first_name: nullable(str),
  last_name: nullable(str),
  ...times,
});

export const Product = obj({ id: str, name: str, ...times });

export const Price = obj({
  id: str,
  amount: { type: 'integer', minimum: 0, description: 'Cents' },
  product_id: str,
  active: bool,
  recurring: {
    oneOf: [
      obj({ interval: { type: 'string', enum: ['day', 'week', 'month', 'year'] }, interval_count: { type: 'integer', minimum: 1 } }),
      { type: 'null' },
    ],
    description: 'null for a one-time price',
  },
  ...times,
});

export const InvoiceLineItem = obj(
  {
    id: str,
    price_id: str,
    product_id: str,
    product_name: str,
    quantity: int,
    unit_amount: money,
    amount: money,
    description: str,
  },
  ['description'],
);

export const Invoice = obj({
  id: str,
  customer_id: str,
  subscription_id: nullable(str),
  status: { type: 'string', enum: [...INVOICE_STATUSES] },
  due_date: date,
  total_amount: money,
  amount_paid: money,
  period_start: nullable(timestamp),
  period_end: nullable(timestamp),
  line_items: { type: 'array', items: ref('InvoiceLineItem') },
  hosted_invoice_url: { type: 'string', format: 'uri', description: "`<PUBLIC_URL>/invoice/<secret>`: the invoice's hosted page, where the customer sees and pays it. Unguessable; a rotation ends it" },
  invoice_pdf: { type: 'string', format: 'uri', description: '`<PUBLIC_URL>/invoice/<secret>/pdf`: the invoice as a PDF, behind the same secret' },
  ...times,
});

export const SubscriptionPhaseItem = obj({
  id: str,
  price_id: str,
  product_id: str,
  product_name: str,
  quantity: int,
  unit_amount: money,
  overridden_price_amount: nullable(decimal),
  effective_price: decimal,
  recurring: bool,
  interval: nullable({ type: 'string', enum: ['day', 'week', 'month', 'year'] }),
  interval_count: nullable(int),
});

export const SubscriptionPhase = obj({
  id: str,
  start_date: timestamp,
  end_date: nullable(timestamp),
  is_active: bool,
  items: { type: 'array', items: ref('SubscriptionPhaseItem') },
});

export const Subscription = obj({
  id: str,
  customer_id: str,
  status: { type: 'string', enum: [...SUBSCRIPTION_STATUSES] },
  proration_behavior: { type: 'string', enum: [...PRORATION_BEHAVIORS] },
  billing_cycle_anchor: timestamp,
  start_date: timestamp,
  end_date: nullable(timestamp),
  next_billing_date: nullable(timestamp),
  total_amount: money,
  canceled_at: nullable(timestamp),
  phases: { type: 'array', items: ref('SubscriptionPhase') },
  ...times,
});

export const SubscriptionTimeline = obj({
  subscription_id: str,
  timeline: {
    type: 'array',
    items: obj(
      {
        at: timestamp,
        step: str,
        event: str,
        event_id: str,
        invoice_id: nullable(str),
        amount: nullable(str),
        status: str,
        period_start: nullable(str),
        phase_id: str,
        start_date: nullable(str),
        end_date: nullable(str),
      },
      ['invoice_id', 'amount', 'status', 'period_start', 'phase_id', 'start_date', 'end_date'],
    ),
  },
});

export const WalletAddress = obj({ id: str, address: str, currency, created_at: timestamp });

export const Wallet = obj({
  id: str,
  object: { const: 'wallet' },
  owner_type: { type: 'string', enum: ['account', 'customer'] },
  owner_id: str,
  crypto_addresses: { type: 'array', items: ref('WalletAddress') },
  crypto_address_count: { type: 'integer', minimum: 0 },
  ...times,
});

export const Explorer = obj({ name: str, url: { type: 'string', format: 'uri' } });

export const CryptoAddress = obj({
  id: str,
  object: { const: 'crypto_address' },
  address: str,
  currency,
  wallet_id: str,
  explorer: ref('Explorer'),
  ...times,
});

export const TransactionAllocation = obj({ id: str, invoice_id: str, amount_applied: money, created_at: timestamp });

/** The chain paid another amount than the transaction records (the transaction is kept as recorded). */
export const AmountMismatch = obj({ recorded_amount: cryptoAmount, chain_amount: cryptoAmount, detected_at: timestamp });

export const CryptoTransaction = obj({
  id: str,
  object: { const: 'crypto_transaction' },
  amount: cryptoAmount,
  transaction_id: str,
  transaction_source: { type: 'string', enum: [...TRANSACTION_SOURCES] },
  timestamp,
  currency,
  from_address_id: nullable(str),
  from_address: nullable(str),
  to_address_id: str,
  to_address: str,
  usd_value: nullable(money),
  unallocated_amount: nullable(money),
  amount_mismatch: { oneOf: [ref('AmountMismatch'), { type: 'null' }] },
  allocations: { type: 'array', items: ref('TransactionAllocation') },
  ...times,
});

export const PaymentClaim = obj({
  id: str,
  object: { const: 'payment_claim' },
  status: { type: 'string', enum: [...CLAIM_STATUSES] },
  amount: cryptoAmount,
  transaction_id: str,
  rejection_reason: nullable(str),
  approved_at: nullable(timestamp),
  customer_id: str,
  currency,
  to_address_id: str,
  to_address: str,
  approved_by_id: nullable(int),
  crypto_transaction_id: nullable(str),
  payment_claim_link_id: str,
  ...times,
});

export const PaymentClaimLink = obj({
  id: str,
  object: { const: 'payment_claim_link' },
  status: { type: 'string', enum: [...LINK_STATUSES] },
  expires_at: timestamp,
  max_uses: { type: 'integer', minimum: 1 },
  use_count: { type: 'integer', minimum: 0 },
  used_at: nullable(timestamp),
  metadata: { type: 'string', description: 'Free-text notes; `""` when none was given' },
  price_id: nullable(str),
  link: { type: 'string', format: 'uri', description: '`<PUBLIC_URL>/pay/<secret>`: share it with the customer' },
  customer_id: str,
  crypto_payment_claim_id: nullable(str),
  usable: bool,
  expired: bool,
  ...times,
});

/** Where a payment stands, as a customer's page polls it; `paid` when `paidWhen`. */
function paymentStatusSchema(paidWhen: string): Schema {
  return obj(
    {
      state: { type: 'string', enum: [...PAYMENT_STATES], description: `\`waiting\`; \`detected\` (seen on chain to one of the customer's own addresses, not final); \`paid\` (${paidWhen})` },
      confirmations: { type: ['integer', 'null'], minimum: 0, description: 'For `detected`: confirmations of the payment so far' },
      confirmations_required: { type: ['integer', 'null'], minimum: 1, description: 'For `detected`: confirmations at which it is recorded' },
    },
    [],
    { description: 'Where the payment stands; the page polls this' },
  );
}

const payToSchema: Schema = {
  type: 'array',
  items: obj({
    currency,
    address: str,
    explorer: ref('Explorer'),
    amount: { ...nullable(cryptoAmount), description: 'Estimate of the amount due in this currency at the current price (the `quotes` entry); null when nothing is due or no price is known' },
    payment_uri: { type: 'string', description: 'BIP 21 `bitcoin:<address>?amount=<BTC>` or EIP-681 `ethereum:<address>?value=<wei>` with `amount`; the address alone when `amount` is null' },
    qr_code_url: { type: 'string', description: 'Path on this server of an SVG QR code of `payment_uri`' },
  }),
};

const quotesSchema: Schema = { type: 'array', items: obj({ currency, usd_price: decimal, amount: cryptoAmount }) };

/**
 * What the customer's page reads. An unusable link (used, expired) shows its status only; a usable
 * one adds what to pay, where, and the proof-of-work challenge.
 */
export const PublicPaymentClaimLink = obj(
  {
    object: { const: 'payment_claim_link' },
    status: { type: 'string', enum: [...LINK_STATUSES] },
    usable: bool,
    expired: bool,
    expires_at: timestamp,
    max_uses: int,
    use_count: int,
    price: {
      oneOf: [obj({ id: str, amount: money, currency: str }), { type: 'null' }],
    },
    amount_due: money,
    invoices: {
      type: 'array',
      description: "The customer's open invoices and those paid since the link was made, oldest due date first",
      items: obj({ id: str, status: { type: 'string', enum: ['pending', 'overdue', 'paid'] }, due_date: date, total_amount: money, amount_due: money }),
    },
    payment_status: paymentStatusSchema('every invoice listed is paid'),
    pay_to: payToSchema,
    quotes: quotesSchema,
    verification_required: bool,
    challenge: {
      oneOf: [
        {
          type: 'object',
          description: 'ALTCHA challenge: find `number` with SHA-256(salt + number) = challenge',
          required: ['algorithm', 'challenge', 'salt', 'signature'],
          properties: { algorithm: str, challenge: str, maxnumber: int, salt: str, signature: str },
        },
        { type: 'null' },
      ],
    },
  },
  ['expires_at', 'max_uses', 'use_count', 'price', 'amount_due', 'invoices', 'payment_status', 'pay_to', 'quotes', 'verification_required', 'challenge'],
);

/**
 * What an invoice's hosted page reads: the invoice as its customer sees it, what settles it
 * (older open invoices are paid first) and where to pay.
 */
export const PublicInvoice = obj({
  object: { const: 'invoice' },
  id: str,
  status: { type: 'string', enum: [...INVOICE_STATUSES] },
  usable: { ...bool, description: 'False once the invoice is void (`canceled`): nothing is due' },
  account: obj({ name: str }, [], { description: 'Who bills' }),
  customer: obj({ name: nullable(str), email: nullable(str) }, [], { description: 'Who is billed' }),
  due_date: date,
  period_start: nullable(timestamp),
  period_end: nullable(timestamp),
  line_items: { type: 'array', items: obj({ product_name: str, description: nullable(str), quantity: int, unit_amount: money, amount: money }) },
  total_amount: money,
  amount_paid: money,
  amount_remaining: { ...money, description: "This invoice's own balance: `0.00` once paid or void" },
  amount_due: { ...money, description: "What settles this invoice now: its balance plus the balances of the customer's older open invoices, which a payment pays first" },
  invoices: {
    type: 'array',
    description: 'The open invoices `amount_due` settles, oldest first, this one last; empty unless the invoice is open',
    items: obj({ id: str, status: { type: 'string', enum: [...INVOICE_STATUSES] }, due_date: date, total_amount: money, amount_due: money }),
  },
  payments: {
    type: 'array',
    description: 'Payments applied to the invoice, oldest first',
    items: obj({ date: timestamp, amount_applied: money, currency: nullable(currency), amount: nullable(cryptoAmount), transaction_hash: nullable(str) }),
  },
  payment_status: paymentStatusSchema('the invoice is paid'),
  pay_to: { ...payToSchema, description: "The customer's own addresses (none: the page says to contact the sender), with the estimate of `amount_due`" },
  quotes: quotesSchema,
  created_at: timestamp,
});

const webhookEndpointProps = {
  id: str,
  url: str,
  description: nullable(str),
  enabled: bool,
  subscriptions: { type: 'array', items: str },
  signing_secret_last4: str,
  disabled_reason: nullable(str),
  ...times,
};

export const WebhookEndpoint = obj(webhookEndpointProps);

export const WebhookEndpointWithSecret = obj(
  { ...webhookEndpointProps, signing_secret: { type: 'string', pattern: '^whsec_[0-9a-f]{64}$' } },
  [],
  { description: 'Only create and regenerate_secret show the full secret.' },
);

export const WebhookAttempt = obj({
  attempt: { type: 'integer', minimum: 1 },
  attempted_at: timestamp,
  status_code: nullable(int),
  error: nullable({ type: 'string', enum: ['timeout', 'tls_error', 'connection_error', 'private_address', 'port_not_allowed'] }),
  error_detail: nullable(str),
  latency_ms: { type: 'number', minimum: 0 },
  response_body: nullable(str),
});

export const WebhookDelivery = obj({
  id: str,
  object: { const: 'webhook_delivery' },
  endpoint_id: str,
  event_id: str,
  event: str,
  payload: { type: ['object', 'null'], description: 'The event payload; null once the event is purged (30 days)' },
  timestamp: nullable(timestamp),
  redelivery: bool,
  status: { type: 'string', enum: ['pending', 'succeeded', 'failed', 'canceled'] },
  ended_reason: nullable(str),
  attempt_count: { type: 'integer', minimum: 0 },
  next_attempt_at: nullable(timestamp),
  attempts: { type: 'array', items: ref('WebhookAttempt') },
  ...times,
});

const month: Schema = { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}$', description: '`YYYY-MM`' };
const count: Schema = { type: 'integer', minimum: 0 };
const countAndAmount = (): Schema => obj({ count, amount: money });

export const MrrReport = obj({
  object: { const: 'mrr_report' },
  currency: { const: 'USD' },
  from: month,
  to: month,
  months: {
    type: 'array',
    items: obj({
      month,
      starting_mrr: money,
      mrr: money,
      arr: money,
      new_mrr: money,
      expansion_mrr: money,
      contraction_mrr: { ...money, description: 'Negative or zero' },
      churned_mrr: { ...money, description: 'Negative or zero' },
      net_new_mrr: money,
      active_subscriptions: count,
      new_subscriptions: count,
      churned_subscriptions: count,
    }),
  },
});

export const ReceivablesReport = obj({
  object: { const: 'receivables_report' },
  currency: { const: 'USD' },
  as_of: date,
  total: countAndAmount(),
  overdue: countAndAmount(),
  buckets: {
    type: 'array',
    items: obj({
      bucket: { type: 'string', enum: [...AGING_BUCKETS] },
      label: str,
      count,
      amount: money,
      invoices: {
        type: 'array',
        items: obj({
          id: str,
          customer_id: str,
          status: { type: 'string', enum: [...INVOICE_STATUSES] },
          due_date: date,
          days_past_due: count,
          total_amount: money,
          amount_paid: money,
          balance: money,
        }),
      },
      invoices_truncated: bool,
    }),
  },
});

export const CollectionsReport = obj({
  object: { const: 'collections_report' },
  from: month,
  to: month,
  rows: {
    type: 'array',
    items: obj({
      month,
      currency: { type: 'string', enum: ['BTC', 'ETH', 'USD'] },
      source: { type: 'string', enum: [...COLLECTION_SOURCES] },
      manual: bool,
      payments: count,
      amount: { ...decimal, description: 'In the currency\'s units (coins, or USD)' },
      usd_value: money,
      allocated_usd: money,
      unallocated_usd: money,
    }),
  },
  months: { type: 'array', items: obj({ month, usd_value: money, payments: count }) },
  unallocated_credit: { type: 'array', items: obj({ customer_id: nullable(str), amount: money, transactions: count }) },
});

export const Account = obj({ id: str, name: str, sandboxes: { type: 'array', items: str }, ...times });

export const Me = obj({
  id: { type: 'integer', description: 'The user' },
  email: nullable(str),
  account: obj({ id: str, name: nullable(str) }),
  sandbox: nullable(str),
  token: obj({ last4: nullable(str), last_used_at: nullable(timestamp) }),
});

export const AuthToken = obj({ token: { type: 'string', pattern: '^[0-9a-f]{32}$' } });

/** Every resource schema, by the component name the OpenAPI document gives it. */
export const RESOURCE_SCHEMAS: Record<string, Schema> = {
  Pagination,
  Customer,
  Product,
  Price,
  InvoiceLineItem,
  Invoice,
  SubscriptionPhaseItem,
  SubscriptionPhase,
  Subscription,
  SubscriptionTimeline,
  WalletAddress,
  Wallet,
  Explorer,
  CryptoAddress,
  TransactionAllocation,
  AmountMismatch,
  CryptoTransaction,
  PaymentClaim,
  PaymentClaimLink,
  PublicPaymentClaimLink,
  PublicInvoice,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookAttempt,
  WebhookDelivery,
  Account,
  Me,
  AuthToken,
  MrrReport,
  ReceivablesReport,
  CollectionsReport,
};

/** `{<key>: [<item>], pagination}`: the one list shape. */
export function listOf(key: string, item: string): Schema {
  return obj({ [key]: { type: 'array', items: ref(item) }, pagination: ref('Pagination') });
}
