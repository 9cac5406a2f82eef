/**
 * Each test file gets its own database on the real FerretDB that `npm test` started,
 * dropped afterwards, so files can run in parallel.
 */
import mongoose from 'mongoose';
import { connectDatabase, disconnectDatabase } from '../../src/db/connection';

export function testDatabaseUri(): string {
  const base = process.env.TEST_MONGODB_URL;
  if (!base) throw new Error('TEST_MONGODB_URL is not set: run the tests with `npm test`');
  const name = `t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  return `${base}/${name}`;
}

export function useTestDatabase(): { uri: () => string } {
  let uri = '';
  beforeAll(async () => {
    uri = testDatabaseUri();
    await connectDatabase(uri);
  });
  afterAll(async () => {
    await mongoose.connection.db?.dropDatabase().catch(() => undefined);
    await disconnectDatabase();
  });
  return { uri: () => uri };
}
