// Storage micro-benchmark through the MongoDB driver (docs/storage.md, "Measuring it"):
//   node scripts/storage-bench.mjs <mongodb-uri> [docs=2000,10000] [clients=1,8]
// For each document count and client count, in a fresh database: inserts (one insertOne per
// document), then finds by _id, updates by _id and finds by an indexed field (email), each for
// up to BENCH_SECONDS (default 4) or BENCH_OPS (default 2000) operations. Prints ops/s and p50.
//   node scripts/storage-bench.mjs <mongodb-uri> list
// A list page as src/services/writes/listing.ts reads it (find + sort created_at/_id desc + skip +
// limit 25, and countDocuments) for an account of 300 then 3,000 documents, with another
// account's 5,000 documents in the same collection. Single client; p50 of 20 runs each.
import { MongoClient } from 'mongodb';
import { randomBytes } from 'node:crypto';

const uri = process.argv[2];
if (!uri) { console.error('usage: node scripts/storage-bench.mjs <mongodb-uri> [docs] [clients]'); process.exit(2); }
const listMode = process.argv[3] === 'list';
const docCounts = listMode ? [] : (process.argv[3] ?? '2000,10000').split(',').map(Number);
const clientCounts = (process.argv[4] ?? '1,8').split(',').map(Number);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const maxOps = Number(process.env.BENCH_OPS ?? 2000);

const p50 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : NaN; };

/** Runs `op(i)` from `clients` concurrent loops until `total` ops or the deadline; ops/s and p50 ms. */
async function run(clients, total, deadlineMs, op) {
  let next = 0;
  const lat = [];
  const start = performance.now();
  const end = deadlineMs ? start + deadlineMs : Infinity;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < total && performance.now() < end) {
      const i = next++;
      const t = performance.now();
      await op(i);
      lat.push(performance.now() - t);
    }
  }));
  const secs = (performance.now() - start) / 1000;
  return { ops: lat.length, perSec: lat.length / secs, p50: p50(lat) };
}

const fmt = (r) => `${r.perSec.toFixed(0).padStart(6)}/s p50 ${r.p50.toFixed(2).padStart(7)} ms (${r.ops} ops)`;

const client = new MongoClient(uri, { maxPoolSize: 16 });
await client.connect();
try {
  for (const n of docCounts) {
    for (const c of clientCounts) {
      const db = client.db(`storagebench_${Date.now().toString(36)}`);
      const coll = db.collection('docs');
      // The shape of the service's scoped documents and its indexes.
      await coll.createIndexes([
        { key: { account_id: 1, sandbox: 1, email: 1 }, unique: true },
        { key: { account_id: 1, sandbox: 1, created_at: -1, _id: -1 } },
        { key: { email: 1 } },
      ]);
      const ids = Array.from({ length: n }, (_, i) => `cust_${i}_${randomBytes(6).toString('hex')}`);
      const accounts = 20;
      const doc = (i) => ({
        _id: ids[i], account_id: `acct_${i % accounts}`, sandbox: null, email: `user${i}@example.com`,
        first_name: 'First', last_name: 'Last', metadata: { plan: 'basic', n: i },
        created_at: new Date(), updated_at: new Date(),
      });
      const ins = await run(c, n, 0, (i) => coll.insertOne(doc(i)));
      const rnd = () => Math.floor(Math.random() * n);
      const byId = await run(c, maxOps, seconds * 1000, async () => {
        const d = await coll.findOne({ _id: ids[rnd()] });
        if (!d) throw new Error('missing');
      });
      const upd = await run(c, maxOps, seconds * 1000, async () => {
        const r = await coll.updateOne({ _id: ids[rnd()] }, { $set: { updated_at: new Date(), 'metadata.plan': 'pro' } });
        if (r.matchedCount !== 1) throw new Error('not matched');
      });
      const byEmail = await run(c, maxOps, seconds * 1000, async () => {
        const d = await coll.findOne({ email: `user${rnd()}@example.com` });
        if (!d) throw new Error('missing');
      });
      console.log(`docs=${n} clients=${c}`);
      console.log(`  insert        ${fmt(ins)}`);
      console.log(`  find _id      ${fmt(byId)}`);
      console.log(`  update _id    ${fmt(upd)}`);
      console.log(`  find email    ${fmt(byEmail)}`);
      await db.dropDatabase();
    }
  }
  if (listMode) await listBench();
} finally {
  await client.close();
}

async function listBench() {
  const db = client.db(`storagebench_${Date.now().toString(36)}`);
  const coll = db.collection('customers');
  await coll.createIndexes([
    { key: { account_id: 1, sandbox: 1, email: 1 }, unique: true },
    { key: { account_id: 1, sandbox: 1, created_at: -1, _id: -1 } },
  ]);
  let seq = 0;
  const add = async (account, n) => {
    for (let i = 0; i < n; i += 500) {
      await coll.insertMany(Array.from({ length: Math.min(500, n - i) }, () => {
        const k = seq++;
        return { _id: `cust_${k}_${randomBytes(4).toString('hex')}`, account_id: account, sandbox: null, email: `c${k}@example.com`,
          first_name: 'First', last_name: 'Last', metadata: { n: k }, created_at: new Date(Date.now() + k), updated_at: new Date() };
      }));
    }
  };
  const filter = { account_id: 'acct_A', sandbox: null };
  const time = async (f) => { const xs = []; for (let i = 0; i < 20; i++) { const t = performance.now(); await f(); xs.push(performance.now() - t); } return p50(xs); };
  const stage = async (label) => {
    const total = await coll.countDocuments({});
    const page = (n) => time(() => coll.find(filter).sort({ created_at: -1, _id: -1 }).skip((n - 1) * 25).limit(25).toArray());
    const p1 = await page(1); const p10 = await page(10);
    const count = await time(() => coll.countDocuments(filter));
    const both = await time(() => Promise.all([coll.find(filter).sort({ created_at: -1, _id: -1 }).limit(25).toArray(), coll.countDocuments(filter)]));
    console.log(`${label} (collection ${total}): page 1 ${p1.toFixed(1)} ms, page 10 ${p10.toFixed(1)} ms, countDocuments ${count.toFixed(1)} ms, page 1 + count in parallel ${both.toFixed(1)} ms`);
  };
  await add('acct_A', 300);
  await stage('account A 300');
  await add('acct_B', 5000);
  await stage('account A 300, account B 5000');
  await add('acct_A', 2700);
  await stage('account A 3000, account B 5000');
  await db.dropDatabase();
}
