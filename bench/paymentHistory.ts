/**
 * Payment-history section of `npm run bench`: what a payment costs once its payer has a history.
 * Payments through the API (POST /v1/crypto_transactions, allocated by the worker) to customers'
 * wallets and to the account's wallet are measured twice: with a few open invoices in the account,
 * then after 100,000 paid invoices of the same customers were written straight through the driver
 * (as the reports bench writes its data; each listed, and paid by a crypto allocation). The CPU of
 * a payment, every process counted, must stay flat: at most x1.5 of the same payment before; so must
 * a view of a paying customer's hosted invoice page (its public endpoint, which lists the
 * customer's other open invoices), and a view of a payment claim link of that customer made before
 * the stage's payments (its public endpoint, which lists the customer's open invoices and those
 * paid since the link was made).
 *
 * `BENCH_HISTORY_CUSTOMERS` (20) and `BENCH_HISTORY_INVOICES` (100,000) shrink it for a quick run.
 */
import { randomBytes } from 'node:crypto';
import { createAccount } from '../src/services/accounts/accounts';
import { CryptoTransaction } from '../src/models/cryptoTransaction';
import { Invoice, paidMarks } from '../src/models/invoice';
import { newId, ID_PREFIX } from '../src/lib/ids';
import { assignListSlots, recountListSlots } from '../src/services/writes/listing';
import { readCollectionsRollup, readReceivablesRollup } from '../src/services/reports/reportRollups';
import { call, customerWallet, randomBtcAddress } from './crypto';
import { cpuLine, withCpu, type CpuWindow } from './cpu';
import { insertInBatches, pool, target, until } from './support';

const CUSTOMERS = Number(process.env.BENCH_HISTORY_CUSTOMERS ?? 20);
const HISTORY = Number(process.env.BENCH_HISTORY_INVOICES ?? 100_000);
/** Four payments of 50.00 a customer pay its two open invoices of 100.00 in each stage. */
const PAYMENTS_PER_CUSTOMER = 4;
const OPEN_PER_CUSTOMER = 2;
/** Payments to the account's wallet in each stage, each matching one open invoice of 50.00. */
const ACCOUNT_PAYMENTS = 20;
const CONCURRENCY = 10;
/** Views of the hosted invoice page, and of a claim link, in each stage. */
const PAGE_VIEWS = 20;
const FLAT = 1.5;

interface Stage {
  customer: { cpu: CpuWindow; seconds: number };
  account: { cpu: CpuWindow; seconds: number };
  page: { cpu: CpuWindow; seconds: number };
  link: { cpu: CpuWindow; seconds: number };
}

export async function runPaymentHistoryBench(apiUrl: string): Promise<string[]> {
  const acct = await createAccount({ email: `bench-history-${Date.now()}@example.com`, password: 'bench password 1' });
  const token = acct.token;
  const scope = { accountId: acct.account_id, sandbox: null };
  const api = (method: string, path: string, body?: unknown) => call(apiUrl, token, method, path, body);
  const product = await api('POST', '/v1/products', { name: 'Bench' });
  const hundred = await api('POST', '/v1/prices', { product_id: product.id, amount: 10000 });
  const fifty = await api('POST', '/v1/prices', { product_id: product.id, amount: 5000 });
  const wallets = (await api('GET', '/v1/wallets?page=1')).wallets as { id: string; owner_type: string; owner_id: string }[];
  const accountWallet = wallets.find((w) => w.owner_type === 'account')!;
  const accountAddress = (await api('POST', '/v1/crypto_addresses', { wallet_id: accountWallet.id, currency_code: 'BTC', address: randomBtcAddress() })).id as string;
  // The account-wallet payments' invoices belong to a customer that pays nothing itself.
  const billed = (await api('POST', '/v1/customers', { email: 'billed@history.bench' })).id as string;
  const customers: { id: string; addressId: string }[] = [];
  await pool(Array.from({ length: CUSTOMERS }, (_, i) => i), CONCURRENCY, async (i) => {
    const c = await api('POST', '/v1/customers', { email: `payer${i}@history.bench` });
    const wallet = await customerWallet(api, c.id);
    const addr = await api('POST', '/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: randomBtcAddress() });
    customers.push({ id: c.id, addressId: addr.id });
  });
  // An open invoice of a paying customer, due after everything the stages' payments pay: its page is viewed in each stage.
  const shown = await api('POST', '/v1/invoices', { customer_id: customers[0].id, due_date: '2027-12-01', line_items: [{ price_id: hundred.id }] });
  const pageUrl = `${apiUrl}/v1/public/invoices/${new URL(shown.hosted_invoice_url).pathname.split('/')[2]}`;

  /** Pays `count` transactions of 0.001 BTC (50.00 USD at the fixed price) to each address, then waits until each is allocated. */
  const payAll = async (addresses: string[]) => {
    const ids: string[] = [];
    await pool(addresses, CONCURRENCY, async (to) => {
      const tx = await api('POST', '/v1/crypto_transactions', { to_address_id: to, amount: '0.001', currency_code: 'BTC', transaction_id: randomBytes(32).toString('hex') });
      if (tx) ids.push(tx.id);
    });
    const waiting = [...ids];
    await until(`${ids.length} payments allocated`, async () => {
      while (waiting.length > 0 && (await CryptoTransaction.findById(waiting[waiting.length - 1], { allocated_at: 1 }).lean<{ allocated_at?: Date | null }>())?.allocated_at) waiting.pop();
      return waiting.length === 0;
    }, 100);
    return ids.length;
  };
  // The rollup rebuilds that the set-up's (or the seed's) writes left due run before a window, not in it (ADR 0316).
  const settle = async () => {
    await until('report rollups current', async () => !!(await readCollectionsRollup(scope)) && !!(await readReceivablesRollup(scope)), 250, 120_000).catch(() => undefined);
  };
  const stage = async (): Promise<Stage> => {
    // Made before the stage's invoices and payments: its view lists the open one shown above and the two this stage pays.
    const link = await api('POST', '/v1/payment_claim_links', { customer_id: customers[0].id, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    const linkUrl = `${apiUrl}/v1/public/payment_claim_links/${new URL(link.link).pathname.split('/')[2]}`;
    await pool(customers, CONCURRENCY, async (c) => {
      for (let k = 0; k < OPEN_PER_CUSTOMER; k++) await api('POST', '/v1/invoices', { customer_id: c.id, due_date: `2027-0${k + 1}-01`, line_items: [{ price_id: hundred.id }] });
    });
    await pool(Array.from({ length: ACCOUNT_PAYMENTS }, (_, k) => k), CONCURRENCY, async () => {
      await api('POST', '/v1/invoices', { customer_id: billed, due_date: '2027-06-01', line_items: [{ price_id: fifty.id }] });
    });
    await settle();
    // Customers first, until every one of their invoices is paid: an account-wallet payment matches any open invoice of its balance.
    const customer = await withCpu(() => payAll(customers.flatMap((c) => Array.from({ length: PAYMENTS_PER_CUSTOMER }, () => c.addressId))));
    const account = await withCpu(() => payAll(Array.from({ length: ACCOUNT_PAYMENTS }, () => accountAddress)));
    await settle();
    const page = await withCpu(async () => {
      for (let k = 0; k < PAGE_VIEWS; k++) {
        const res = await fetch(pageUrl);
        const body = (await res.json()) as { status?: string };
        if (res.status !== 200 || body.status !== 'pending') throw new Error(`bench: the invoice page answered ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      }
    });
    const linkView = await withCpu(async () => {
      for (let k = 0; k < PAGE_VIEWS; k++) {
        const res = await fetch(linkUrl);
        const body = (await res.json()) as { usable?: boolean; invoices?: { status: string }[] };
        const paid = body.invoices?.filter((i) => i.status === 'paid').length;
        if (res.status !== 200 || !body.usable || body.invoices?.length !== OPEN_PER_CUSTOMER + 1 || paid !== OPEN_PER_CUSTOMER) {
          throw new Error(`bench: the claim link answered ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
        }
      }
    });
    return { customer, account, page, link: linkView };
  };

  const before = await stage();
  const seeded = await seedPaidInvoices(scope, customers.map((c) => c.id), HISTORY);
  await settle();
  const after = await stage();

  const customerPayments = CUSTOMERS * PAYMENTS_PER_CUSTOMER;
  const fullSize = CUSTOMERS >= 20 && HISTORY >= 100_000;
  const perOperation = (w: { cpu: CpuWindow }, n: number) => (w.cpu.total * 1000) / n;
  const flatTarget = (name: string, operation: string, what: string, b: number, a: number) =>
    target('payment-history', name, `x${(a / b).toFixed(2)} of the same ${operation} before (${a.toFixed(2)} ms against ${b.toFixed(2)} ms, ${what})`, `<= x${FLAT}`, a / b <= FLAT, fullSize);
  return [
    `payment-history: ${customerPayments} payments to ${CUSTOMERS} customers' wallets and ${ACCOUNT_PAYMENTS} to the account's wallet, before and after ${HISTORY} paid invoices of those customers (written in ${seeded.toFixed(0)} s)`,
    cpuLine(`${customerPayments} customer payments before`, before.customer.cpu, before.customer.seconds),
    cpuLine(`${customerPayments} customer payments after`, after.customer.cpu, after.customer.seconds),
    cpuLine(`${ACCOUNT_PAYMENTS} account-wallet payments before`, before.account.cpu, before.account.seconds),
    cpuLine(`${ACCOUNT_PAYMENTS} account-wallet payments after`, after.account.cpu, after.account.seconds),
    cpuLine(`${PAGE_VIEWS} views of a paying customer's invoice page before`, before.page.cpu, before.page.seconds),
    cpuLine(`${PAGE_VIEWS} views of a paying customer's invoice page after`, after.page.cpu, after.page.seconds),
    cpuLine(`${PAGE_VIEWS} views of that customer's claim link before`, before.link.cpu, before.link.seconds),
    cpuLine(`${PAGE_VIEWS} views of that customer's claim link after`, after.link.cpu, after.link.seconds),
    flatTarget('cpu-per-customer-payment', 'payment', `${HISTORY / CUSTOMERS} paid invoices a customer`, perOperation(before.customer, customerPayments), perOperation(after.customer, customerPayments)),
    flatTarget('cpu-per-account-payment', 'payment', `${HISTORY} paid invoices in the account`, perOperation(before.account, ACCOUNT_PAYMENTS), perOperation(after.account, ACCOUNT_PAYMENTS)),
    flatTarget('cpu-per-invoice-page', 'view', `${HISTORY / CUSTOMERS} paid invoices of its customer`, perOperation(before.page, PAGE_VIEWS), perOperation(after.page, PAGE_VIEWS)),
    flatTarget('cpu-per-claim-link-view', 'view', `${HISTORY / CUSTOMERS} paid invoices of its customer`, perOperation(before.link, PAGE_VIEWS), perOperation(after.link, PAGE_VIEWS)),
  ];
}

/** `count` invoices of the customers, paid in full by a crypto allocation each, listed in the account's invoice list; returns the seconds it took. */
async function seedPaidInvoices(scope: { accountId: string; sandbox: null }, customerIds: string[], count: number): Promise<number> {
  const started = performance.now();
  const issued = new Date(Date.UTC(2024, 0, 1));
  for (let done = 0; done < count; done += 1000) {
    const n = Math.min(1000, count - done);
    const { slots, sealed } = await assignListSlots(Invoice, scope, n);
    const docs = slots.map((slot, i) => {
      const id = newId(ID_PREFIX.invoice);
      const customerId = customerIds[(done + i) % customerIds.length];
      return {
        _id: id, account_id: scope.accountId, sandbox: null, ...slot, customer_id: customerId, subscription_id: null, status: 'paid', ...paidMarks(customerId, issued),
        due_date: '2024-01-08', total_amount: '100.00', amount_paid: '100.00', billing_key: id, period_start: null, period_end: null,
        line_items: [{ _id: newId(ID_PREFIX.lineItem), price_id: 'price_bench', product_id: 'prod_bench', product_name: 'Bench', quantity: 1, unit_amount: '100.00', amount: '100.00', description: null }],
        crypto_allocations: [{ id: newId(ID_PREFIX.allocation), transaction_id: newId(ID_PREFIX.cryptoTransaction), amount_applied: '100.00', pays_in_full: true, created_at: issued }],
        created_at: issued, updated_at: issued,
      };
    });
    await insertInBatches(Invoice, docs);
    await recountListSlots(Invoice, [...docs, ...sealed]);
  }
  return (performance.now() - started) / 1000;
}
