/**
 * The embedded database under as many concurrent writes as one process can send (the driver's
 * default maxPoolSize, 100): FerretDB v1 holds two PostgreSQL connections per update (the
 * query's iterator and the write), so with its default pool of 50 it wedged for good once 50
 * updates were in flight. scripts/lib.sh gives it 400 (docs/storage.md).
 */
import { MongoClient } from 'mongodb';
import { testDatabaseUri } from '../support/db';

it('completes rounds of 100 concurrent updates and findOneAndUpdates by _id', async () => {
  const uri = testDatabaseUri();
  // Every connection opened up front, so the 100 writes of a round really are in flight together.
  const client = new MongoClient(uri, { maxPoolSize: 100, minPoolSize: 100, maxConnecting: 100 });
  await client.connect();
  try {
    const db = client.db();
    const coll = db.collection<{ _id: string; n: number }>('concurrency');
    const ids = Array.from({ length: 100 }, (_, i) => `doc${i}`);
    await coll.insertMany(ids.map((_id) => ({ _id, n: 0 })));
    for (let i = 0; i < 3; i++) await Promise.all(ids.map(() => db.command({ ping: 1 })));
    const deadline = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the database stopped answering (pool deadlock)')), 30_000))]);
    for (let round = 1; round <= 5; round++) {
      await deadline(Promise.all(ids.map((_id, i) => (i % 2 ? coll.updateOne({ _id }, { $set: { n: round } }) : coll.findOneAndUpdate({ _id }, { $set: { n: round } })))));
    }
    const docs = await coll.find({}).toArray();
    expect(docs).toHaveLength(100);
    expect(docs.every((d) => d.n === 5)).toBe(true);
    await db.dropDatabase();
  } finally {
    await client.close(true);
  }
}, 120_000);
