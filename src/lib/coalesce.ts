/**
 * Same-key work that only needs to run *after* a caller's own write, not once per caller: a
 * bucket recount after an insert, a "this rollup is stale" mark after a source write. Callers of
 * one key share a run: a caller that arrives while a run is going joins the one queued behind it
 * (which starts after the current one ends, so it sees the caller's write); callers that arrive
 * while nothing runs start one. So a burst of N callers costs two or three runs, not N, and each
 * caller still returns only after a run that began after it arrived.
 *
 * In-flight work of this process, like a connection pool's: it holds no data and forgets a key
 * once its runs are done.
 */
export class Coalescer {
  private readonly slots = new Map<string, { queued: Promise<void> | null }>();

  run(key: string, task: () => Promise<void>): Promise<void> {
    const slot = this.slots.get(key);
    if (!slot) {
      const fresh = { queued: null as Promise<void> | null };
      this.slots.set(key, fresh);
      return this.settle(key, fresh, task());
    }
    if (slot.queued) return slot.queued;
    const current = this.tail.get(slot) ?? Promise.resolve();
    const queued = current.then(
      () => this.takeOver(key, slot, task),
      () => this.takeOver(key, slot, task),
    );
    slot.queued = queued;
    return queued;
  }

  /** Whether a run of `key` is going (tests). */
  busy(key: string): boolean {
    return this.slots.has(key);
  }

  // The settled end of each slot's current run, which a queued run waits for.
  private readonly tail = new WeakMap<object, Promise<void>>();

  private takeOver(key: string, slot: { queued: Promise<void> | null }, task: () => Promise<void>): Promise<void> {
    // From here, callers that arrive queue behind this run.
    slot.queued = null;
    return this.settle(key, slot, task());
  }

  private settle(key: string, slot: { queued: Promise<void> | null }, running: Promise<void>): Promise<void> {
    const done = running.finally(() => {
      if (slot.queued === null && this.slots.get(key) === slot) this.slots.delete(key);
    });
    this.tail.set(
      slot,
      done.then(
        () => undefined,
        () => undefined,
      ),
    );
    return done;
  }
}
