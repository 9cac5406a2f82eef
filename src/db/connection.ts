import mongoose from 'mongoose';

/** Connects mongoose and builds the indexes (unique rules live in indexes). */
export async function connectDatabase(uri: string): Promise<typeof mongoose> {
  mongoose.set('strictQuery', true);
  await mongoose.connect(uri, { serverSelectionTimeoutMS: 10_000, autoIndex: false });
  await Promise.all(Object.values(mongoose.models).map((m) => m.createIndexes()));
  return mongoose;
}

export async function pingDatabase(): Promise<void> {
  const db = mongoose.connection.db;
  if (!db) throw new Error('not connected');
  await db.admin().command({ ping: 1 });
}

export async function disconnectDatabase(): Promise<void> {
  await mongoose.disconnect();
}
