/**
 * The rate limits' Redis store (redisCounters) against the redis-server scripts/test.sh starts
 * (TEST_REDIS_URL): a window of N per key, counts shared by separate processes with their own
 * clients (no hit lost under concurrency), and a store failure counted in memory and reported.
 */
import { fork, ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { redisCounters } from '../../src/api/middleware/rateLimit';
import { closedPort } from '../support/httpsReceiver';

const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const unique = (name: string) => `${name}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
let client: Redis;

beforeAll(async () => {
  client = new Redis(url);
  await client.ping(); // connected: rejectIfRedisNotReady would send the first hits to memory
});
afterAll(async () => {
  await client.quit();
});

function hitter(name: string, perMinute: number, hits: number): { child: ChildProcess; ready: Promise<unknown>; allowed: Promise<number> } {
  const child = fork(path.join(__dirname, '../support/counterHitter.ts'), [url, name, String(perMinute), String(hits)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`hitter exited with ${code}`)));
  });
  const allowed = ready.then(() => new Promise<number>((resolve) => child.once('message', (m) => resolve(m as number))));
  return { child, ready, allowed };
}

describe('redisCounters', () => {
  it('allows perMinute hits per key in a window, then refuses with the time left', async () => {
    const failures: unknown[] = [];
    const counter = redisCounters(client, (err) => failures.push(err))(unique('unit'), 3);
    const hits = [];
    for (let i = 0; i < 5; i += 1) hits.push(await counter.hit('a'));
    expect(hits.map((h) => h.allowed)).toEqual([true, true, true, false, false]);
    expect(hits.map((h) => h.remaining)).toEqual([2, 1, 0, 0, 0]);
    expect(hits[4].resetMs).toBeGreaterThan(55_000);
    expect(hits[4].resetMs).toBeLessThanOrEqual(60_000);
    expect((await counter.hit('b')).allowed).toBe(true);
    expect(failures).toEqual([]);
  });

  it('loses no hit when two processes, each with its own client, hit one key at once', async () => {
    const name = unique('procs');
    // 2 x 400 concurrent hits on a limit of 500: exactly 500 allowed in all, and Redis counted all 800.
    const a = hitter(name, 500, 400);
    const b = hitter(name, 500, 400);
    await Promise.all([a.ready, b.ready]);
    a.child.send('go');
    b.child.send('go');
    const [na, nb] = await Promise.all([a.allowed, b.allowed]);
    expect(na + nb).toBe(500);
    expect(Number(await client.get(`rl:${name}:key`))).toBe(800);
  }, 60_000);

  it('counts in memory and reports the failure when Redis is unreachable', async () => {
    const down = new Redis(`redis://127.0.0.1:${await closedPort()}`, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    down.on('error', () => undefined);
    const failures: unknown[] = [];
    const counter = redisCounters(down, (err) => failures.push(err))(unique('down'), 2);
    const allowed = [];
    for (let i = 0; i < 3; i += 1) allowed.push((await counter.hit('k')).allowed);
    expect(allowed).toEqual([true, true, false]);
    expect(failures).toHaveLength(3);
    down.disconnect();
  });
});
