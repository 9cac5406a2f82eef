/**
 * A separate process for test/api/sharedCounters.test.ts: its own Redis client hits one counter
 * HITS times at once when told 'go', then sends back how many hits were allowed.
 *   node --import tsx test/support/counterHitter.ts <redis-url> <name> <perMinute> <hits>
 */
import { Redis } from 'ioredis';
import { redisCounters } from '../../src/api/middleware/rateLimit';

async function main(): Promise<void> {
  const [url, name, perMinute, hits] = process.argv.slice(2);
  const client = new Redis(url);
  const counter = redisCounters(client, (err) => {
    throw err;
  })(name, Number(perMinute));
  await client.ping();
  process.send!('ready');
  await new Promise((resolve) => process.once('message', resolve));
  const results = await Promise.all(Array.from({ length: Number(hits) }, () => counter.hit('key')));
  process.send!(results.filter((r) => r.allowed).length);
  await client.quit();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
