/**
 * Reports section of `npm run bench -- reports`: one account with 1,000 subscriptions and 12
 * months of their invoices and payments, then the p50 of the console's overview and of each
 * report against the p50 of a list page (GET /v1/customers?page=1) measured in the same run.
 * Target (issue 14): each at most x5 of the list page.
 *
 * Customers are created through the API (so the list page is an ordinary one); subscriptions,
 * invoices and crypto transactions are written straight to the database in bulk, shaped as the
 * services write them (no workflow is started for them). The MRR and collections rollups are then
 * rebuilt as the rollup workflow's activity would after such writes (timed), and the reports
 * answered from them are checked equal to the live answers before they are measured.
 * BENCH_REPORTS_SUBSCRIPTIONS (default 1,000) changes the size.
 *
 * The console's daily pages (issue 26) are measured in the same account, which has 10,000
 * customers (named, through the API: ten per subscription) and the ~12,000 invoices (listed, as
 * the services list them): the customer search (a last-name prefix, and an email), a customer's
 * page and the invoice list (all, and pending only), each p50 against the same list page.
 * Target: at most x3.
 */
import { performance } from 'node:perf_hooks';
import { createAccount } from '../src/services/accounts/accounts';
import { signIn } from '../src/services/console/consoleSessions';
import { Subscription } from '../src/models/subscription';
import { Invoice } from '../src/models/invoice';
import { CryptoTransaction } from '../src/models/cryptoTransaction';
import { newId, ID_PREFIX } from '../src/lib/ids';
import { insertInBatches, percentile, pool, target } from './support';
import { isDeepStrictEqual } from 'node:util';
import { rebuildRollup } from '../src/services/reports/reportRollups';
import { receivablesTotals } from '../src/services/reports/reports';
import { assignListSlots, recountListSlots } from '../src/services/writes/listing';

const SECTION = 'reports';
/** The size the target is defined for (issue 14). */
const FULL_SUBSCRIPTIONS = 1000;
const SUBSCRIPTIONS = Number(process.env.BENCH_REPORTS_SUBSCRIPTIONS ?? FULL_SUBSCRIPTIONS);
/** Ten customers per subscription: 10,000 at full size (issue 26), most of them with no invoice. */
const CUSTOMERS = Math.max(1, SUBSCRIPTIONS * 10);
const FIRST_NAMES = ['Ada', 'Bruno', 'Chloé', 'Dmitri', 'Elena', 'Farid', 'Greta', 'Hiro', 'Ines', 'Jonas', 'Kemal', 'Lena', 'Marco', 'Nadia', 'Oskar', 'Priya', 'Quinn', 'Rosa', 'Sven', 'Tariq'];
const LAST_NAMES = ['Okafor', 'Schmidt', 'García', 'Kowalski', 'Tanaka', 'Novak', 'Dubois', 'Rossi', 'Silva', 'Jensen', 'Murphy', 'Petrov', 'Andersson', 'Bianchi', 'Costa', 'Dimitrov', 'Eriksen', 'Fischer', 'Gallagher', 'Horvat', 'Ibrahim', 'Jovanović', 'Kaur', 'Lindqvist', 'Moreau', 'Nakamura', 'Olsen', 'Pereira', 'Quintero', 'Rahman', 'Santos', 'Takahashi', 'Urbanek', 'Vasquez', 'Wagner', 'Xu', 'Yilmaz', 'Zimmermann', 'Abara', 'Brennan', 'Castillo', 'Delgado', 'Esposito', 'Fontaine', 'Gómez', 'Haddad', 'Ivanova', 'Jaramillo', 'Kim', 'Lefebvre', 'Mendes', 'Nilsen', 'Ortega', 'Popescu', 'Reyes', 'Sato', 'Torres', 'Ueda', 'Varga', 'Weber'];
/** The console's page target (issue 26). */
const CONSOLE_TARGET = 3;
const MONTHS = 12;
const SAMPLES = { min: 10, max: 40, budgetMs: 30_000 };
const progress = (msg: string) => process.stderr.write(`[bench reports] ${msg}\n`);
const ms = (x: number) => (x < 10 ? `${x.toFixed(2)} ms` : x < 100 ? `${x.toFixed(1)} ms` : `${x.toFixed(0)} ms`);

async function sampleP50(fn: () => Promise<Response>): Promise<{ p50: number; n: number }> {
  for (let i = 0; i < 2; i++) await (await fn()).arrayBuffer(); // warm-up
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < SAMPLES.max && (i < SAMPLES.min || performance.now() - started < SAMPLES.budgetMs); i++) {
    const t = performance.now();
    const res = await fn();
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`reports bench: ${res.url} answered ${res.status}`);
    times.push(performance.now() - t);
  }
  return { p50: percentile(times, 50), n: times.length };
}


export async function runReportsBench(apiUrl: string): Promise<string[]> {
  const email = `bench-reports-${Date.now()}@example.com`;
  const account = await createAccount({ email, password: 'bench-password' });
  const scope = { account_id: account.account_id, sandbox: null };
  const auth = { Authorization: `Bearer ${account.token}` };

  const customers: string[] = [];
  await pool(Array.from({ length: CUSTOMERS }, (_, i) => i), 8, async (i) => {
    const [first, last] = [FIRST_NAMES[i % FIRST_NAMES.length], LAST_NAMES[Math.floor(i / FIRST_NAMES.length) % LAST_NAMES.length]];
    const body = { email: `c${i}@reports.bench`, first_name: first, last_name: last };
    const res = await fetch(`${apiUrl}/v1/customers`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST /v1/customers: ${res.status}`);
    customers.push(((await res.json()) as { id: string }).id);
  });
  progress(`${customers.length} customers through the API`);

  // Subscriptions: monthly at 10-90 USD, quantity 1-3, started 12 months ago; every 7th changes
  // plan half-way, every 10th is canceled in the last quarter (churn), every 13th is yearly.
  const now = Date.now();
  const start = new Date(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - MONTHS + 1, 1));
  const subs: object[] = [];
  const invoices: object[] = [];
  const transactions: object[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const id = newId(ID_PREFIX.subscription);
    const customer = customers[i % customers.length];
    const yearly = i % 13 === 0;
    const unit = `${10 + (i % 9) * 10}.00`;
    const item = (quantity: number) => ({
      _id: newId(ID_PREFIX.subscriptionItem), price_id: 'price_bench', product_id: 'prod_bench', product_name: 'Bench plan', quantity,
      unit_amount: yearly ? '1200.00' : unit, overridden_price_amount: null, recurring: true, interval: yearly ? 'year' : 'month', interval_count: 1,
    });
    const half = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 6, 1));
    const phases = i % 7 === 0
      ? [
          { _id: newId(ID_PREFIX.subscriptionPhase), start_date: start, end_date: half, items: [item(1)], created_at: start, updated_at: start },
          { _id: newId(ID_PREFIX.subscriptionPhase), start_date: half, end_date: null, items: [item(1 + (i % 3))], created_at: start, updated_at: start },
        ]
      : [{ _id: newId(ID_PREFIX.subscriptionPhase), start_date: start, end_date: null, items: [item(1 + (i % 3))], created_at: start, updated_at: start }];
    const canceled = i % 10 === 0 ? new Date(now - ((i % 80) + 1) * 86_400_000) : null;
    subs.push({ _id: id, ...scope, customer_id: customer, proration_behavior: 'create_prorations', billing_cycle_anchor: null, status: canceled ? 'canceled' : 'active', canceled_at: canceled, active_phase_index: 0, phases, created_at: start, updated_at: start });
    for (let m = 0; m < MONTHS; m++) {
      const issued = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m, 1));
      if (issued.getTime() > now || (canceled && issued > canceled)) break;
      const invoiceId = newId(ID_PREFIX.invoice);
      const total = yearly ? '1200.00' : `${(Number(unit) * (1 + (i % 3))).toFixed(2)}`;
      const due = new Date(issued.getTime() + 7 * 86_400_000).toISOString().slice(0, 10);
      // The last two months' invoices of every 4th subscription are still open.
      const open = m >= MONTHS - 2 && i % 4 === 0;
      invoices.push({
        _id: invoiceId, ...scope, customer_id: customer, subscription_id: id, status: open ? (m === MONTHS - 1 ? 'pending' : 'overdue') : 'paid', due_date: due,
        total_amount: total, amount_paid: open ? '0.00' : total, line_items: [], billing_key: invoiceId, period_start: issued, period_end: null, created_at: issued, updated_at: issued,
      });
      if (!open) {
        transactions.push({
          _id: newId(ID_PREFIX.cryptoTransaction), ...scope, currency: i % 2 ? 'BTC' : 'ETH', amount: '0.001', transaction_id: `0x${invoiceId}`,
          transaction_source: i % 3 ? 'blockchain' : 'manual_entry', timestamp: new Date(issued.getTime() + 86_400_000), from_address_id: null, from_address: null,
          to_address_id: 'addr_bench', to_address: 'bench', wallet_id: 'wall_bench', customer_id: customer, dedupe_key: `bench:${invoiceId}`, usd_value: total, usd_price: '1.00',
          allocations: [{ _id: newId(ID_PREFIX.allocation), invoice_id: invoiceId, amount_applied: total, pays_in_full: true, created_at: issued }],
          unallocated_amount: '0.00', allocated_at: issued, payment_claim_id: null, created_at: issued, updated_at: issued,
        });
      }
    }
  }
  // Invoices listed as createListed lists them: creation order, buckets of 50, counted.
  const listed = (invoices as { created_at: Date; list_scope?: string; list_bucket?: number }[]).sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
  const { slots, sealed } = await assignListSlots(Invoice, { accountId: account.account_id, sandbox: null }, listed.length);
  listed.forEach((inv, n) => Object.assign(inv, slots[n]));
  const seedStarted = performance.now();
  await insertInBatches(Subscription, subs);
  await insertInBatches(Invoice, listed);
  await recountListSlots(Invoice, [...listed, ...sealed]);
  await insertInBatches(CryptoTransaction, transactions);
  progress(`${customers.length} customers, ${subs.length} subscriptions, ${invoices.length} invoices, ${transactions.length} transactions written in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`);

  const cookie = `console_session=${await signIn({ email, password: 'bench-password' }, 3600)}`;
  const get = (path: string, headers: Record<string, string> = auth) => () => fetch(apiUrl + path, { headers });

  // The documents were written straight to the database, so no write marked or rebuilt the
  // rollups: the reports answer live. One call of each live, then the rebuild the rollup
  // workflow's activity does, then the same reports from the rollups: the answers must be equal.
  const reportPaths = ['/v1/reports/mrr', '/v1/reports/collections', '/v1/reports/receivables'];
  const timedJson = async (path: string) => {
    const t = performance.now();
    const res = await get(path)();
    const body = await res.json();
    if (res.status !== 200) throw new Error(`reports bench: ${path} answered ${res.status}`);
    return { body, ms: performance.now() - t };
  };
  const live = await Promise.all(reportPaths.map(async (p) => timedJson(p)));
  const liveTotals = await receivablesTotals({ accountId: account.account_id, sandbox: null });
  const rebuilds: string[] = [];
  for (const kind of ['mrr', 'collections', 'receivables'] as const) {
    const t = performance.now();
    const outcome = await rebuildRollup({ accountId: account.account_id, sandbox: null }, kind);
    if (!outcome.current) throw new Error(`reports bench: the ${kind} rollup is not current after its rebuild`);
    rebuilds.push(`${kind} ${ms(performance.now() - t)} (${outcome.parts} parts)`);
  }
  for (const [i, p] of reportPaths.entries()) {
    const fromRollup = await timedJson(p);
    if (!isDeepStrictEqual(fromRollup.body, live[i].body)) throw new Error(`reports bench: ${p} from the rollup differs from the live answer`);
  }
  if (!isDeepStrictEqual(await receivablesTotals({ accountId: account.account_id, sandbox: null }), liveTotals)) throw new Error('reports bench: the receivables totals from the rollup differ from the live ones');
  progress(`rollups rebuilt: ${rebuilds.join(', ')}; answers equal to the live ones`);
  const list = await sampleP50(get('/v1/customers?page=1'));
  const measured: [string, { p50: number; n: number }][] = [
    ['console overview (GET /console)', await sampleP50(get('/console', { Cookie: cookie }))],
    ['GET /v1/reports/mrr', await sampleP50(get('/v1/reports/mrr'))],
    ['GET /v1/reports/receivables', await sampleP50(get('/v1/reports/receivables'))],
    ['GET /v1/reports/collections', await sampleP50(get('/v1/reports/collections'))],
  ];
  // The console's daily pages: the first search gives older customers their terms (none here: all made through the API) and is a warm-up.
  const someone = customers[0];
  const consoleMeasured: [string, string, { p50: number; n: number }][] = [
    ['customer-search-name', 'console customer search, a last-name prefix (GET /console/customers?q=okaf)', await sampleP50(get('/console/customers?q=okaf', { Cookie: cookie }))],
    ['customer-search-email', 'console customer search, an email (GET /console/customers?q=c4242@reports.bench)', await sampleP50(get(`/console/customers?q=${encodeURIComponent(`c${Math.min(4242, CUSTOMERS - 1)}@reports.bench`)}`, { Cookie: cookie }))],
    ['customer-page', 'console customer page (GET /console/customers/:id)', await sampleP50(get(`/console/customers/${someone}`, { Cookie: cookie }))],
    ['invoice-list', 'console invoice list (GET /console/invoices)', await sampleP50(get('/console/invoices', { Cookie: cookie }))],
    ['invoice-list-pending', 'console invoice list, pending (GET /console/invoices?status=pending)', await sampleP50(get('/console/invoices?status=pending', { Cookie: cookie }))],
  ];
  const lines = [
    `reports: ${customers.length} customers, ${subs.length} subscriptions, ${invoices.length} invoices, ${transactions.length} transactions in one account`,
    `  list page (GET /v1/customers?page=1)          p50 ${ms(list.p50)} (${list.n} samples, baseline)`,
    `  rollup rebuild (the activity, once): ${rebuilds.join(', ')}`,
    ...reportPaths.map((p, i) => `  live, without rollup (one call): ${p} ${ms(live[i].ms)} = x${(live[i].ms / list.p50).toFixed(1)} of the list page`),
    ...measured.map(([name, m]) => `  ${name.padEnd(44)} p50 ${ms(m.p50)} (${m.n} samples) = x${(m.p50 / list.p50).toFixed(1)} of the list page`),
    ...consoleMeasured.map(([, name, m]) => `  ${name} p50 ${ms(m.p50)} (${m.n} samples) = x${(m.p50 / list.p50).toFixed(1)} of the list page`),
  ];
  for (const [name, m] of measured) {
    const short = name.startsWith('console') ? 'overview' : name.split('/').pop()!;
    lines.push(target(SECTION, short, `x${(m.p50 / list.p50).toFixed(1)}`, '<= x5 of a list page', m.p50 <= 5 * list.p50, SUBSCRIPTIONS >= FULL_SUBSCRIPTIONS));
  }
  for (const [short, , m] of consoleMeasured) {
    lines.push(target(SECTION, short, `x${(m.p50 / list.p50).toFixed(1)}`, `<= x${CONSOLE_TARGET} of a list page`, m.p50 <= CONSOLE_TARGET * list.p50, SUBSCRIPTIONS >= FULL_SUBSCRIPTIONS));
  }
  return lines;
}
