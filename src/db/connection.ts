import mongoose from 'mongoose';

/** DB_UNAVAILABLE_TIMEOUT_MS's default (src/config): how long an operation waits for an unreachable database. */
export const DEFAULT_DB_UNAVAILABLE_TIMEOUT_MS = 5_000;

export interface DatabaseOptions {
  /**
   * Bounds every wait on an unreachable server: the driver's server selection, mongoose's
   * command buffer (commands issued while mongoose is disconnected wait there for a reconnect)
   * and opening a connection. Past it the operation fails with an error `isDatabaseUnavailable`
   * recognises, and the API answers 503 instead of waiting for the defaults (30 s selection, 10 s
   * buffer, 30 s connect). A server that stops answering without closing its connections (frozen,
   * or a black-holed network) is found by the heartbeat, every half of it, which gives up after
   * it and interrupts the operations waiting on that server.
   */
  unavailableTimeoutMs?: number;
}

/** Connects mongoose and builds the indexes (unique rules live in indexes). */
export async function connectDatabase(uri: string, opts: DatabaseOptions = {}): Promise<typeof mongoose> {
  const timeoutMs = opts.unavailableTimeoutMs ?? DEFAULT_DB_UNAVAILABLE_TIMEOUT_MS;
  mongoose.set('strictQuery', true);
  // Buffering stays on (a command issued during a short reconnect still goes through), bounded.
  mongoose.set('bufferTimeoutMS', timeoutMs);
  await mongoose.connect(uri, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    // A hello every half of the bound (at least 0.5 s): a frozen server is noticed within 1.5x of it.
    heartbeatFrequencyMS: Math.max(500, Math.floor(timeoutMs / 2)),
    autoIndex: false,
  });
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
