/**
 * Same-key work that only needs to run *after* a caller's own write, not once per caller: a
 * bucket recount after an insert, a "this rollup is stale" mark after a source write. Callers of
 * one key share a run: a caller that arrives while a run is going joins the one queued behind it
 * (which starts after the current one ends, so it sees the caller's write); callers that arrive
 * while nothing runs start one. So a burst of N callers costs two or three runs, not N, and each
 * caller still returns only after a run that began after it arrived.
 *
 * A run may produce a value (a read whose answer must be no older than the caller's call): the
 * callers of one run share its answer, so treat it as read-only.
 *
 * In-flight work of this process, like a connection pool's: it holds no data and forgets a key
 * once its runs are done.
 */
interface Slot<T> {
  /** The settled end of the current run, which a queued run waits for. */
  tail: Promise<void>;
  /** The run callers arriving now join; null when they would queue a new one. */
  queued: Promise<T> | null;
}

export class Coalescer<T = void> {
  private readonly slots = new Map<string, Slot<T>>();

  run(key: string, task: () => Promise<T>): Promise<T> {
    const slot = this.slots.get(key);
    if (!slot) {
      const fresh: Slot<T> = { tail: Promise.resolve(), queued: null };
      this.slots.set(key, fresh);
      return this.launch(key, fresh, task);
    }
    if (slot.queued) return slot.queued;
    slot.queued = slot.tail.then(() => {
      // From here, callers that arrive queue behind this run.
      slot.queued = null;
      return this.launch(key, slot, task);
    });
    return slot.queued;
  }

  /** Whether a run of `key` is going (tests). */
  busy(key: string): boolean {
    return this.slots.has(key);
  }

  private launch(key: string, slot: Slot<T>, task: () => Promise<T>): Promise<T> {
    const done = task().finally(() => {
      if (slot.queued === null && this.slots.get(key) === slot) this.slots.delete(key);
    });
    slot.tail = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }
}

/**
 * A read by key whose concurrent callers share one run that starts after each caller's call (see
 * Coalescer): what each caller gets is no older than its call. The shared value is read-only.
 */
export function sharedReads<T>(read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const reads = new Coalescer<T>();
  return (key) => reads.run(key, () => read(key));
}
