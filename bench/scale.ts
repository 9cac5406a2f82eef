/**
 * Scale section of `npm run bench -- scale`: does the per-request cost of one account stay flat
 * while the collection grows around it, and grow gently with the account itself? Entirely
 * through the service's HTTP API (accounts and tokens come from the service function, as in the
 * other sections):
 *
 *   stage 1: account A gets 300 customers;
 *   stage 2: another account B adds 5,000 customers to the collection (A unchanged);
 *   stage 3: A grows to 3,000;
 *   stage 4: other accounts' bulk fills the collection to 300,000 documents (written straight
 *            through the driver, as the reports section does: they only need to be there), then
 *            A grows to 30,000 through the API.
 *
 * At each stage, for A: p50 of GET /v1/customers/:id, PATCH /v1/customers/:id (a random one of
 * A's customers each time) and GET /v1/customers?page=1, each from one sequential client (the
 * cost of a request, not queueing), and the create rate of POST /v1/customers at 8 concurrent
 * clients over a window of creates made at that stage (stage 1: A's last creates up to 300;
 * stage 2: A's first creates after B's growth; stage 3: A's last creates up to 3,000). Each is
 * printed with its ratio to stage 1, then one `target` line per goal of the issue:
 * by-id ratios and the create-rate slowdown at most x1.5, list page 1 at most x1.5 while A is
 * unchanged (stage 2) and at most x3 from 300 to 3,000 (stage 3) and to 30,000 (stage 4).
 *
 * BENCH_SCALE_MAX (default 30,000) is A's final size: a quick run at 3,000 stops after stage 3,
 * and stage 4's targets then read `missed (reduced size)`.
 *
 * BENCH_SCALE_FACTOR (default 1) shrinks every size proportionally for a backend too slow to
 * create 8,300 customers in reasonable time; the output says so. The bulk growth runs through
 * the API at 8 concurrent clients and prints its progress on stderr.
 */
import { performance } from 'node:perf_hooks';
import { createAccount } from '../src/services/accounts/accounts';
import { Customer } from '../src/models/customer';
import { ID_PREFIX, newId } from '../src/lib/ids';
import { percentile, pool, target } from './support';
import { withCpu } from './cpu';

const FACTOR = Number(process.env.BENCH_SCALE_FACTOR ?? 1);
/** A's size at stage 4 (the issue's 30,000); 3,000 or less skips stage 4. */
const MAX_A = Number(process.env.BENCH_SCALE_MAX ?? 30_000);
/** The collection's size at stage 4. */
const STAGE4_COLLECTION = 300_000;
/** Accounts the stage-4 bulk is spread over. */
const BULK_ACCOUNTS = 100;
const CLIENTS = 8;
const SECTION = 'scale';

interface Sampling {
  max: number;
  min: number;
  budgetMs: number;
}
const GET_SAMPLING: Sampling = { max: 400, min: 50, budgetMs: 20_000 };
const PATCH_SAMPLING: Sampling = { max: 200, min: 30, budgetMs: 30_000 };
const LIST_SAMPLING: Sampling = { max: 60, min: 9, budgetMs: 30_000 };

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (x: number) => (x < 10 ? `${x.toFixed(2)} ms` : x < 100 ? `${x.toFixed(1)} ms` : `${x.toFixed(0)} ms`);
const progress = (msg: string) => process.stderr.write(`[bench scale] ${msg}\n`);

class Client {
  retried5xx = 0;
  errors = 0;
  constructor(
    private base: string,
    private token: string,
  ) {}

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(this.base + path, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  /** POST /v1/customers; a 5xx or a dropped connection is retried, and a retry told the email is taken means the first attempt landed. */
  async createCustomer(email: string): Promise<string | null> {
    for (let attempt = 0; ; attempt++) {
      let res: { status: number; json: any } | null = null;
      try {
        res = await this.request('POST', '/v1/customers', { email });
      } catch (err) {
        if (attempt >= 5) throw err;
      }
      if (res && res.status === 201) return res.json.id as string;
      if (res && attempt > 0 && res.status === 422 && res.json?.error?.param === 'email') return null;
      if (res && (res.status < 500 || attempt >= 5)) throw new Error(`POST /v1/customers: ${res.status} ${JSON.stringify(res.json)}`);
      this.retried5xx += 1;
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
}

/** Creates `count` customers at CLIENTS concurrent clients; returns their ids and the elapsed ms. */
async function grow(client: Client, label: string, prefix: string, from: number, count: number, ids: string[], quiet = false) {
  const started = performance.now();
  let done = 0;
  let lastReport = started;
  let lastDone = 0;
  await pool(
    Array.from({ length: count }, (_, i) => from + i),
    CLIENTS,
    async (n) => {
      const id = await client.createCustomer(`${prefix}${n}@scale.bench`);
      if (id) ids.push(id);
      done += 1;
      const now = performance.now();
      if (!quiet && (now - lastReport > 15_000 || done === count)) {
        // The recent rate: creates slow down as the collection grows on some backends.
        const recent = (done - lastDone) / ((now - lastReport) / 1000);
        lastReport = now;
        lastDone = done;
        if (done < count) progress(`${label}: ${fmt(done)}/${fmt(count)} (${recent.toFixed(1)}/s lately, about ${Math.ceil((count - done) / recent)} s left at that rate)`);
        else progress(`${label}: ${fmt(done)}/${fmt(count)} in ${((now - started) / 1000).toFixed(0)} s (${(done / ((now - started) / 1000)).toFixed(1)}/s)`);
      }
    },
  );
  return performance.now() - started;
}

/**
 * Other accounts' customers written straight through the driver (no list slots: no one lists
 * them), until the collection holds `total` documents. Returns how many were written.
 */
async function fillCollection(total: number, stamp: number): Promise<number> {
  const missing = total - (await Customer.countDocuments({}));
  const now = new Date();
  let written = 0;
  for (let i = 0; i < missing; i += 1000) {
    const docs = Array.from({ length: Math.min(1000, missing - i) }, (_, k) => {
      const n = i + k;
      return { _id: newId(ID_PREFIX.customer), account_id: `acct_bulk${stamp}x${n % BULK_ACCOUNTS}`, sandbox: null, email: `bulk${n}@scale.bench`, first_name: null, last_name: null, created_at: now, updated_at: now };
    });
    await Customer.collection.insertMany(docs as never[], { ordered: false });
    written += docs.length;
    if (written % 50_000 < 1000 || written === missing) progress(`bulk: ${fmt(written)}/${fmt(missing)} other accounts' customers through the driver`);
  }
  return Math.max(0, written);
}

/** Sequential latencies of fn: at least s.min samples, then more until s.max or the time budget. */
async function sample(client: Client, s: Sampling, fn: (i: number) => Promise<{ status: number }>, warmup: number): Promise<{ p50: number; n: number }> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < s.max && (i < s.min || performance.now() - started < s.budgetMs); i++) {
    const t = performance.now();
    const res = await fn(i);
    const elapsed = performance.now() - t;
    if (res.status >= 300) {
      client.errors += 1;
      if (client.errors > 20) throw new Error(`scale bench: too many failed requests (last status ${res.status})`);
      continue;
    }
    times.push(elapsed);
  }
  return { p50: percentile(times, 50), n: times.length };
}

interface Stage {
  label: string;
  accountSize: number;
  collectionSize: number;
  get: { p50: number; n: number };
  /** CPU of one GET :id, every process of the stack and the bench counted (bench/cpu.ts). */
  getCpuMs: number;
  patch: { p50: number; n: number };
  list: { p50: number; n: number };
  createsPerSecond: number;
}

async function measureReads(client: Client, ids: string[], label: string): Promise<Omit<Stage, 'createsPerSecond'>> {
  const pick = () => ids[Math.floor(Math.random() * ids.length)];
  const { result: get, cpu: getCpu } = await withCpu(() => sample(client, GET_SAMPLING, () => client.request('GET', `/v1/customers/${pick()}`), 10));
  const getCpuMs = (getCpu.total * 1000) / Math.max(1, get.n);
  const patch = await sample(client, PATCH_SAMPLING, (i) => client.request('PATCH', `/v1/customers/${pick()}`, { first_name: `Patched ${i}` }), 5);
  const list = await sample(client, LIST_SAMPLING, () => client.request('GET', '/v1/customers?page=1'), 2);
  const listed = await client.request('GET', '/v1/customers?page=1');
  const collectionSize = await Customer.countDocuments({});
  const stage = { label, accountSize: listed.json.pagination.count as number, collectionSize, get, getCpuMs, patch, list };
  progress(
    `${label}: A ${fmt(stage.accountSize)}, collection ${fmt(collectionSize)}: GET p50 ${ms(get.p50)} (n=${get.n}, CPU ${ms(getCpuMs)} each), PATCH p50 ${ms(patch.p50)} (n=${patch.n}), list page 1 p50 ${ms(list.p50)} (n=${list.n})`,
  );
  return stage;
}

export async function runScaleBench(apiUrl: string): Promise<string[]> {
  if (!(FACTOR > 0 && FACTOR <= 1)) throw new Error(`BENCH_SCALE_FACTOR must be in (0, 1], got ${process.env.BENCH_SCALE_FACTOR}`);
  const sizeA1 = Math.max(20, Math.round(300 * FACTOR));
  const sizeB = Math.round(5000 * FACTOR);
  const sizeA3 = Math.max(sizeA1 * 2, Math.round(3000 * FACTOR));
  const sizeA4 = Math.round(MAX_A * FACTOR);
  const runStage4 = MAX_A > 3000 && sizeA4 > sizeA3;
  const collection4 = Math.round(STAGE4_COLLECTION * FACTOR);
  const window = Math.min(150, Math.floor(sizeA1 / 2));
  const sectionStart = performance.now();

  const stamp = Date.now();
  const accountA = await createAccount({ email: `scale-a-${stamp}@example.com`, password: 'bench-password' });
  const accountB = await createAccount({ email: `scale-b-${stamp}@example.com`, password: 'bench-password' });
  const a = new Client(apiUrl, accountA.token);
  const b = new Client(apiUrl, accountB.token);
  const idsA: string[] = [];
  const idsB: string[] = [];
  const timedRate = async (from: number, label: string) => {
    const elapsed = await grow(a, label, `a${stamp}-`, from, window, idsA, true);
    const rate = window / (elapsed / 1000);
    progress(`${label}: ${window} creates at ${CLIENTS} clients, ${rate.toFixed(1)}/s`);
    return rate;
  };
  progress(`sizes: A ${fmt(sizeA1)}, then B ${fmt(sizeB)}, then A ${fmt(sizeA3)} (BENCH_SCALE_FACTOR=${FACTOR}); create-rate window ${window}`);

  // Stage 1: A gets sizeA1 customers; the last `window` of them are the timed creates.
  const growA1 = await grow(a, 'A to stage 1', `a${stamp}-`, 0, sizeA1 - window, idsA);
  const rate1 = await timedRate(sizeA1 - window, 'stage 1 create rate');
  const stage1: Stage = { ...(await measureReads(a, idsA, 'stage 1')), createsPerSecond: rate1 };

  // Stage 2: B adds sizeB customers; A unchanged for the reads, then the first `window` of A's growth are timed.
  const growB = await grow(b, 'B adds', `b${stamp}-`, 0, sizeB, idsB);
  const reads2 = await measureReads(a, idsA, 'stage 2');
  const rate2 = await timedRate(sizeA1, 'stage 2 create rate');
  const stage2: Stage = { ...reads2, createsPerSecond: rate2 };

  // Stage 3: A grows to sizeA3; its last `window` creates are timed.
  const growA3 = await grow(a, 'A to stage 3', `a${stamp}-`, sizeA1 + window, sizeA3 - sizeA1 - 2 * window, idsA);
  const rate3 = await timedRate(sizeA3 - window, 'stage 3 create rate');
  const stage3: Stage = { ...(await measureReads(a, idsA, 'stage 3')), createsPerSecond: rate3 };

  const stages = [stage1, stage2, stage3];
  let stage4Lines: string[] = [`  stage 4 not run: BENCH_SCALE_MAX=${MAX_A} (A stops at ${fmt(sizeA3)})`];
  if (runStage4) {
    // Stage 4: the collection filled to its size by other accounts, then A grows to sizeA4 through the API; its last `window` creates are timed.
    const bulkStarted = performance.now();
    const bulk = await fillCollection(collection4 - (sizeA4 - sizeA3), stamp);
    const bulkSeconds = (performance.now() - bulkStarted) / 1000;
    const growA4 = await grow(a, 'A to stage 4', `a${stamp}-`, sizeA3, sizeA4 - sizeA3 - window, idsA);
    const rate4 = await timedRate(sizeA4 - window, 'stage 4 create rate');
    stages.push({ ...(await measureReads(a, idsA, 'stage 4')), createsPerSecond: rate4 });
    stage4Lines = [`  stage 4 growth: other accounts +${fmt(bulk)} through the driver in ${bulkSeconds.toFixed(0)} s, A +${fmt(sizeA4 - sizeA3 - window)} through the API in ${(growA4 / 1000).toFixed(0)} s`];
  }
  const ratio = (x: number, base: number) => x / Math.max(base, 1e-9);
  const lines = [
    `== scale (account A's customers through the API; ${fmt(sizeA1)} -> another account adds ${fmt(sizeB)} -> A grows to ${fmt(sizeA3)}` +
      `${runStage4 ? ` -> the collection holds ${fmt(collection4)} and A grows to ${fmt(sizeA4)}` : ''}) ==`,
    ...(FACTOR !== 1
      ? [`  SCALED DOWN: BENCH_SCALE_FACTOR=${FACTOR}, sizes ${fmt(sizeA1)}/${fmt(sizeB)}/${fmt(sizeA3)} instead of 300/5,000/3,000; the goals are defined for the full sizes`]
      : []),
    `  p50s from one sequential client (random customer of A each request); creates/s: ${window} POSTs at ${CLIENTS} concurrent clients made at each stage`,
    `  ${'stage'.padEnd(24)} ${'A'.padStart(6)} ${'collection'.padStart(10)}  ${'GET :id p50'.padStart(11)}  ${'PATCH p50'.padStart(10)}  ${'list p1 p50'.padStart(11)}  ${'creates/s'.padStart(9)}`,
    ...stages.map(
      (s, i) =>
        `  ${`${i + 1}: ${['A alone', `B added ${fmt(sizeB)}`, `A grew to ${fmt(sizeA3)}`, `A grew to ${fmt(sizeA4)}`][i]}`.padEnd(24)} ${fmt(s.accountSize).padStart(6)} ${fmt(s.collectionSize).padStart(10)}  ` +
        `${ms(s.get.p50).padStart(11)}  ${ms(s.patch.p50).padStart(10)}  ${ms(s.list.p50).padStart(11)}  ${s.createsPerSecond.toFixed(1).padStart(9)}`,
    ),
    ...stages.slice(1).map(
      (s, i) =>
        `  stage ${i + 2} / stage 1: GET x${ratio(s.get.p50, stage1.get.p50).toFixed(2)} (CPU per GET x${ratio(s.getCpuMs, stage1.getCpuMs).toFixed(2)}), PATCH x${ratio(s.patch.p50, stage1.patch.p50).toFixed(2)}, ` +
        `list page 1 x${ratio(s.list.p50, stage1.list.p50).toFixed(2)}, create rate x${ratio(s.createsPerSecond, stage1.createsPerSecond).toFixed(2)} (slowdown x${ratio(stage1.createsPerSecond, s.createsPerSecond).toFixed(2)})`,
    ),
    `  CPU per GET :id (all processes, over its sampling): ${stages.map((s) => ms(s.getCpuMs)).join(' / ')}`,
    `  samples per stage: GET ${stages.map((s) => s.get.n).join('/')}, PATCH ${stages.map((s) => s.patch.n).join('/')}, list ${stages.map((s) => s.list.n).join('/')}; ` +
      `${a.retried5xx + b.retried5xx} creates retried after a 5xx; ${a.errors} failed read/PATCH samples left out`,
    `  growth: A ${fmt(sizeA1 - window)} in ${(growA1 / 1000).toFixed(0)} s, B ${fmt(sizeB)} in ${(growB / 1000).toFixed(0)} s (${(sizeB / (growB / 1000)).toFixed(1)}/s), ` +
      `A +${fmt(sizeA3 - sizeA1 - 2 * window)} in ${(growA3 / 1000).toFixed(0)} s; section ${((performance.now() - sectionStart) / 1000).toFixed(0)} s`,
    ...stage4Lines,
  ];

  // A stage not run (BENCH_SCALE_MAX) still prints its targets, as not measured at full size.
  const notRun = (name: string, k: number, goal: number) => target(SECTION, `${name}-stage${k}-vs-1`, 'not measured', `<= x${goal}`, false, false);
  const latencyTarget = (name: string, pick: (s: Stage) => number, k: 2 | 3 | 4, goal: number) => {
    const s = stages[k - 1];
    if (!s) return notRun(name, k, goal);
    const r = ratio(pick(s), pick(stage1));
    return target(SECTION, `${name}-stage${k}-vs-1`, `x${r.toFixed(2)} (${ms(pick(stage1))} -> ${ms(pick(s))})`, `<= x${goal}`, r <= goal, FACTOR === 1);
  };
  const createTarget = (k: 2 | 3 | 4) => {
    const s = stages[k - 1];
    if (!s) return notRun('create-slowdown', k, 1.5);
    const slowdown = ratio(stage1.createsPerSecond, s.createsPerSecond);
    return target(
      SECTION,
      `create-slowdown-stage${k}-vs-1`,
      `x${slowdown.toFixed(2)} (${stage1.createsPerSecond.toFixed(1)}/s -> ${s.createsPerSecond.toFixed(1)}/s)`,
      '<= x1.5',
      slowdown <= 1.5,
      FACTOR === 1,
    );
  };
  lines.push(
    latencyTarget('get-by-id-p50', (s) => s.get.p50, 2, 1.5),
    latencyTarget('get-by-id-p50', (s) => s.get.p50, 3, 1.5),
    latencyTarget('patch-p50', (s) => s.patch.p50, 2, 1.5),
    latencyTarget('patch-p50', (s) => s.patch.p50, 3, 1.5),
    createTarget(2),
    createTarget(3),
    latencyTarget('list-page1-p50', (s) => s.list.p50, 2, 1.5),
    latencyTarget('list-page1-p50', (s) => s.list.p50, 3, 3),
    latencyTarget('get-by-id-p50', (s) => s.get.p50, 4, 1.5),
    latencyTarget('patch-p50', (s) => s.patch.p50, 4, 1.5),
    createTarget(4),
    latencyTarget('list-page1-p50', (s) => s.list.p50, 4, 3),
  );
  return lines;
}
