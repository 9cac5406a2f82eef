/**
 * Which shared store for the API's counters (issue 25): two processes each make CONCURRENT
 * increments of one key at once, then the count is read back (lost updates show as a shortfall),
 * and the CPU of the increments is divided by the count (the API process's CPU per hit).
 *   node --import tsx bench/sharedCounters.ts <mongodb-url> <redis-url>
 * Either URL may be '-' to skip that store.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import mongoose from 'mongoose';
import Redis from 'ioredis';
import { RateLimiterMongo, RateLimiterRedis } from 'rate-limiter-flexible';

const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 500);
const PROCESSES = 2;
const [, , mongoUrl, redisUrl, role, store, key] = process.argv;

async function child(): Promise<void> {
  let inc: () => Promise<unknown>;
  let close: () => Promise<unknown>;
  if (store.startsWith('mongo')) {
    const conn = await mongoose.createConnection(`${mongoUrl}/counterbench`).asPromise();
    const coll = conn.db!.collection<{ _id: string; n: number }>('counters');
    if (store === 'mongo-inc') inc = () => coll.findOneAndUpdate({ _id: key }, { $inc: { n: 1 } }, { upsert: true });
    else {
      const limiter = new RateLimiterMongo({ storeClient: conn, dbName: 'counterbench', keyPrefix: key, points: 1e9, duration: 60 });
      inc = () => limiter.consume('k');
    }
    close = () => conn.close();
  } else {
    const client = new Redis(redisUrl, { enableOfflineQueue: true });
    const limiter = new RateLimiterRedis({ storeClient: client, keyPrefix: key, points: 1e9, duration: 60 });
    inc = () => limiter.consume('k');
    close = () => client.quit();
  }
  await inc().catch(() => inc()); // connect and warm up (a racing first upsert can fail once: retried; each process adds CONCURRENT + 1)
  process.send!('ready');
  await new Promise((resolve) => process.once('message', resolve));
  const cpu = process.cpuUsage();
  const started = performance.now();
  const results = await Promise.allSettled(Array.from({ length: CONCURRENT }, () => inc()));
  const used = process.cpuUsage(cpu);
  const wallMs = performance.now() - started;
  const errors = results.filter((r) => r.status === 'rejected').length;
  process.send!({ cpuMs: (used.user + used.system) / 1000, wallMs, errors });
  await close();
}

async function readBack(store: string, key: string): Promise<number> {
  if (store.startsWith('mongo')) {
    const conn = await mongoose.createConnection(`${mongoUrl}/counterbench`).asPromise();
    const coll = conn.db!.collection<{ _id: string; n?: number; points?: number }>(store === 'mongo-inc' ? 'counters' : key);
    const doc = store === 'mongo-inc' ? await coll.findOne({ _id: key }) : await coll.findOne({ key: `${key}:k` } as never);
    await conn.close();
    return store === 'mongo-inc' ? (doc?.n ?? 0) : (doc?.points ?? 0);
  }
  const client = new Redis(redisUrl);
  const n = Number(await client.get(`${key}:k`));
  await client.quit();
  return n;
}

/** CPU ms used so far by the server processes named in BENCH_SERVER_PIDS_<STORE> (comma-separated; their children are not followed). */
function serverCpuMs(store: string): number {
  const pids = (process.env[`BENCH_SERVER_PIDS_${store.startsWith('mongo') ? 'MONGO' : 'REDIS'}`] ?? '').split(',').filter(Boolean);
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]); // utime stime cutime cstime
    } catch {
      /* gone */
    }
  }
  return ticks * 10; // USER_HZ = 100
}

async function main(): Promise<void> {
  const stores = [...(mongoUrl !== '-' ? ['mongo-inc', 'mongo-limiter'] : []), ...(redisUrl !== '-' ? ['redis-limiter'] : [])];
  for (const s of stores) {
    const k = `bench${Date.now()}${s.replace(/-/g, '')}`;
    const kids = Array.from({ length: PROCESSES }, () => fork(process.argv[1], [mongoUrl, redisUrl, 'child', s, k], { execArgv: process.execArgv }));
    await Promise.all(kids.map((c) => new Promise((resolve) => c.once('message', resolve))));
    const done = kids.map((c) => new Promise<{ cpuMs: number; wallMs: number; errors: number }>((resolve) => c.once('message', resolve as never)));
    const serverBefore = serverCpuMs(s);
    for (const c of kids) c.send('go');
    const stats = await Promise.all(done);
    await Promise.all(kids.map((c) => new Promise((resolve) => c.once('exit', resolve))));
    const serverMs = serverCpuMs(s) - serverBefore;
    const expected = PROCESSES * (CONCURRENT + 1);
    const got = await readBack(s, k);
    const cpuMs = stats.reduce((a, b) => a + b.cpuMs, 0);
    const errors = stats.reduce((a, b) => a + b.errors, 0);
    console.log(JSON.stringify({ store: s, expected, counted: got, failed: errors, lostSilently: expected - errors - got, clientCpuMsPerHit: +(cpuMs / (PROCESSES * CONCURRENT)).toFixed(3), serverCpuMsPerHit: +(serverMs / (PROCESSES * CONCURRENT)).toFixed(3), wallMs: Math.round(Math.max(...stats.map((x) => x.wallMs))) }));
  }
  await mongoose.disconnect();
}

if (role === 'child') child().catch((err) => { console.error(err); process.exit(1); });
else main().catch((err) => { console.error(err); process.exit(1); });
