// Query plans of the service's hot paths on the embedded backend (docs/storage.md):
//   node --import tsx scripts/storage-explain.ts <mongodb-uri-with-database>
// Builds the models' indexes in a fresh database (as the service does at start-up), loads
// representative data through the models' collections, then asks FerretDB to explain each hot
// path's real filter: FerretDB answers with what it pushed down and PostgreSQL's own plan
// (EXPLAIN on the tables it created). With PG_SOCKET_DIR set (scripts/lib.sh exports it), it
// ANALYZEs first and also prints PostgreSQL's plans for FerretDB's UPDATE/DELETE by _id.
import { execFileSync } from 'node:child_process';
import mongoose from 'mongoose';
import { connectDatabase, disconnectDatabase } from '../src/db/connection';
import { Customer } from '../src/models/customer';
import { Invoice, paidMonthKey } from '../src/models/invoice';
import { Event } from '../src/models/event';
import { WebhookEndpoint } from '../src/models/webhookEndpoint';
import { WebhookDelivery } from '../src/models/webhookDelivery';
import { ApiToken } from '../src/models/apiToken';
import { IdempotencyKey } from '../src/models/idempotencyKey';
import { Wallet } from '../src/models/wallet';
import { PaymentClaimLink } from '../src/models/paymentClaimLink';
import '../src/models/account';
import '../src/models/chainPayment';
import '../src/models/cryptoAddress';
import { AllocationSlot, CryptoTransaction } from '../src/models/cryptoTransaction';
import { OtpSpentStep } from '../src/models/otpSpentStep';
import '../src/models/paymentClaim';
import '../src/models/price';
import '../src/models/product';
import '../src/models/subscription';
import '../src/models/user';

type Plan = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; 'Index Cond'?: string; Filter?: string; Plans?: Plan[] };

const uri = process.argv[2];
if (!uri) throw new Error('usage: storage-explain.ts <mongodb-uri-with-database>');

async function load(): Promise<void> {
  const now = Date.now();
  const bulk = async (model: mongoose.Model<any>, n: number, f: (i: number) => Record<string, unknown>) => {
    for (let i = 0; i < n; i += 1000) {
      await model.collection.insertMany(Array.from({ length: Math.min(1000, n - i) }, (_, k) => f(i + k)) as any[]);
    }
  };
  // Account A: 3,000 production + 300 sandbox customers; B: 5,000; C: 50.
  const acct = (i: number) => (i < 3300 ? 'acct_A' : i < 8300 ? 'acct_B' : 'acct_C');
  await bulk(Customer, 8350, (i) => ({ _id: `cust_${i}`, account_id: acct(i), sandbox: i >= 3000 && i < 3300 ? 'test' : null, email: `c${i}@x.io`, created_at: new Date(now - i * 1000), updated_at: new Date() }));
  await bulk(Wallet, 8350, (i) => ({ _id: `wal_${i}`, account_id: acct(i), sandbox: null, owner_type: 'customer', owner_id: `cust_${i}`, created_at: new Date(now - i * 1000) }));
  await bulk(Invoice, 20000, (i) => ({ _id: `inv_${i}`, account_id: i < 8000 ? 'acct_A' : 'acct_B', sandbox: null, customer_id: `cust_${i % 2000}`, status: i % 3 ? 'paid' : 'pending', ...(i % 3 ? { paid_month_key: paidMonthKey(`cust_${i % 2000}`, new Date(Date.UTC(2026, i % 12, 1))) } : {}), billing_key: `bk_${i}`, subscription_id: `sub_${i % 500}`, created_at: new Date(now - i * 1000) }));
  await bulk(Event, 20000, (i) => ({ _id: `evt_${i}`, account_id: `acct_${i % 50}`, sandbox: null, event: 'customer.created', payload: { id: `cust_${i}` }, timestamp: new Date(now - (20000 - i) * 1000), dispatched: i < 19950, dispatched_at: i >= 19950 ? null : new Date(now - (20000 - i) * 1000 + 50) }));
  await bulk(WebhookEndpoint, 600, (i) => ({ _id: `we_${i}`, account_id: `acct_${i % 200}`, sandbox: i % 2 ? null : 'test', url: 'https://example.com/hook', enabled: true, subscriptions: ['*'], signing_secret: 's', created_at: new Date(now - i * 1000) }));
  await bulk(WebhookDelivery, 6000, (i) => ({ _id: `whd_${i}`, endpoint_id: `we_${i % 600}`, event_id: `evt_${i}`, status: i % 10 ? 'succeeded' : 'pending', created_at: new Date(now - i * 1000) }));
  await bulk(ApiToken, 1000, (i) => ({ _id: `tokhash_${i}`, account_id: `acct_${i % 200}`, user_id: i, sandbox: null, last4: 'abcd', revoked_at: null, created_at: new Date() }));
  await bulk(IdempotencyKey, 5000, (i) => ({ _id: `idem_${i}`, request_hash: 'h', state: 'done', status: 200, body: null, created_at: new Date(now - i * 1000) }));
  // 20,000 transactions, the last 50 still due for allocation (in flight).
  await bulk(CryptoTransaction, 20000, (i) => ({ _id: `trxn_${i}`, account_id: i < 8000 ? 'acct_A' : 'acct_B', sandbox: null, customer_id: `cust_${i % 2000}`, allocation_due: i >= 19950, dedupe_key: `dk_${i}`, timestamp: new Date(now - (20000 - i) * 1000), created_at: new Date(now - (20000 - i) * 1000) }));
  // The invoice slots those transactions' allocations took.
  await bulk(AllocationSlot, 20000, (i) => ({ _id: `inv_${i}#0`, allocation_id: `alloc_${i}`, transaction_id: `trxn_${i}`, invoice_id: `inv_${i}`, amount_applied: '1.00', pays_in_full: true, created_at: new Date(now - i * 1000) }));
  await bulk(OtpSpentStep, 3000, (i) => ({ _id: `${i % 1000}#${59000000 + i}`, user_id: i % 1000, step: 59000000 + i, created_at: new Date() }));
  await bulk(PaymentClaimLink, 2000, (i) => ({ _id: `pcl_${i}`, account_id: acct(i * 4), sandbox: null, customer_id: `cust_${i * 4}`, created_at: new Date(now - i * 1000) }));
}

function describe(p: Plan, depth = 0): string[] {
  const what = [p['Node Type'], p['Index Name'] && `using ${p['Index Name']}`, !p['Index Name'] && p['Relation Name'] && `on ${p['Relation Name']}`]
    .filter(Boolean).join(' ');
  const cond = p['Index Cond'] ? `  [${p['Index Cond'].replace(/\b\w+_[0-9a-f]{8}\./g, '')}]` : p.Filter ? `  filter [${p.Filter.replace(/\b\w+_[0-9a-f]{8}\./g, '')}]` : '';
  return [`${'  '.repeat(depth)}${what}${cond}`, ...(p.Plans ?? []).flatMap((q) => describe(q, depth + 1))];
}

async function explain(label: string, collection: string, inner: Record<string, unknown>): Promise<void> {
  const db = mongoose.connection.db!;
  const r = await db.command({ explain: { ...inner }, verbosity: 'queryPlanner' });
  const plans = (r.queryPlanner as { Plan: Plan }[] | { Plan: Plan });
  const plan = Array.isArray(plans) ? plans[0].Plan : plans.Plan;
  console.log(`\n${label}  (${collection})`);
  console.log(`  pushed down: filter ${r.filterPushdown}, sort ${r.sortPushdown}, limit ${r.limitPushdown}`);
  for (const line of describe(plan)) console.log(`  ${line}`);
}

const find = (collection: string, filter: object, extra: object = {}) => ({ find: collection, filter, ...extra });
const count = (collection: string, filter: object) => ({ aggregate: collection, pipeline: [{ $match: filter }, { $group: { _id: 1, n: { $sum: 1 } } }], cursor: {} });

async function main(): Promise<void> {
  await connectDatabase(uri);
  try {
    const dbName = mongoose.connection.db!.databaseName;
    await load();
    const psql = (sql: string) => execFileSync('psql', ['-X', '-q', '-At', '-h', process.env.PG_SOCKET_DIR!, '-U', 'postgres', '-d', 'ferretdb', '-c', sql], { encoding: 'utf8' });
    if (process.env.PG_SOCKET_DIR) psql('ANALYZE');
    const page = { sort: { created_at: -1, _id: -1 }, limit: 25 };
    await explain('customer by _id (findById; findInScope)', 'customers', find('customers', { _id: 'cust_42' }));
    await explain('list page, production scope: find', 'customers', find('customers', { account_id: 'acct_C', sandbox: null }, page));
    await explain('list page, production scope: countDocuments', 'customers', count('customers', { account_id: 'acct_C', sandbox: null }));
    await explain('list page, production scope, 3,000 of 8,350 documents match', 'customers', find('customers', { account_id: 'acct_A', sandbox: null }, page));
    await explain('list page, sandbox scope', 'customers', find('customers', { account_id: 'acct_A', sandbox: 'test' }, page));
    await explain('pending invoices of a customer (allocation: customer_id + status, one query per open status)', 'invoices', find('invoices', { customer_id: 'cust_7', status: 'pending' }));
    await explain('pending invoices of an account (account-wallet allocation: account_id + status)', 'invoices', find('invoices', { account_id: 'acct_A', sandbox: null, status: 'pending' }));
    await explain('invoices a transaction already wrote (allocation replay: its slots)', 'allocation_slots', find('allocation_slots', { transaction_id: 'trxn_7' }));
    await explain("a customer's invoices paid in a month (claim link's page: paid since the link, one query a month)", 'invoices', find('invoices', { paid_month_key: paidMonthKey('cust_7', new Date(Date.UTC(2026, 10, 1))) }));
    await explain('undispatched events (sweeper)', 'events', find('events', { dispatched: false, timestamp: { $lte: new Date() } }, { sort: { timestamp: 1 }, limit: 100 }));
    await explain('transactions still due for allocation (allocation sweeper)', 'crypto_transactions', find('crypto_transactions', { allocation_due: true }, { limit: 800 }));
    await explain("a user's spent TOTP steps (sign-in)", 'otp_spent_steps', find('otp_spent_steps', { user_id: 7 }));
    await explain('webhook endpoints of an account scope (dispatch)', 'webhook_endpoints', find('webhook_endpoints', { account_id: 'acct_7', sandbox: null }));
    await explain('pending deliveries of an endpoint', 'webhook_deliveries', find('webhook_deliveries', { endpoint_id: 'we_7', status: 'pending' }));
    await explain('token by hash (ApiToken.findById)', 'api_tokens', find('api_tokens', { _id: 'tokhash_7' }));
    await explain('token revoke (updateOne {_id, revoked_at: null}): the query step', 'api_tokens', find('api_tokens', { _id: 'tokhash_7', revoked_at: null }));
    await explain('idempotency key (IdempotencyKey.findById)', 'idempotency_keys', find('idempotency_keys', { _id: 'idem_7' }));
    await explain('customer delete: wallet of the customer', 'wallets', find('wallets', { account_id: 'acct_A', sandbox: null, owner_type: 'customer', owner_id: 'cust_7' }));
    await explain('customer delete: payment claim links of the customer', 'payment_claim_links', find('payment_claim_links', { account_id: 'acct_A', sandbox: null, customer_id: 'cust_8' }));
    if (process.env.PG_SOCKET_DIR) {
      const table = psql(`SELECT _jsonb->>'table' FROM "${dbName}"._ferretdb_database_metadata WHERE _jsonb->>'_id' = 'customers'`).trim();
      for (const sql of [
        `UPDATE "${dbName}".${table} SET _jsonb = _jsonb WHERE _jsonb->'_id' = '"cust_42"'`,
        `DELETE FROM "${dbName}".${table} WHERE _jsonb->'_id' IN ('"cust_42"')`,
      ]) {
        console.log(`\nFerretDB's ${sql.split(' ')[0]} by _id (PostgreSQL EXPLAIN)`);
        for (const line of psql(`EXPLAIN ${sql}`).trim().split('\n')) console.log(`  ${line}`);
      }
    }
    await mongoose.connection.db!.dropDatabase();
  } finally {
    await disconnectDatabase();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
