/**
 * Same-key work that one run can serve for many callers, each after its own call: slot numbers
 * handed out by one counter write, a bucket recount after an insert, a "this rollup is stale"
 * mark after a source write. A caller that arrives while a run of its key goes joins the batch
 * queued behind it (which starts after the current run ends, so it sees the caller's write);
 * callers that arrive while nothing runs start one. So a burst of N callers costs two or three
 * runs, not N, and each caller still returns only after a run that began after it arrived.
 *
 * In-flight work of this process, like a connection pool's: it holds no data and forgets a key
 * once its runs are done.
 */
interface Batch<I, O> {
  items: I[];
  result: Promise<O[]>;
}

interface Slot<I, O> {
  /** The settled end of the current run, which a queued batch waits for. */
  tail: Promise<void>;
  /** The batch callers arriving now join; null when they would queue a new one. */
  queued: Batch<I, O> | null;
}

/**
 * Runs `write(key, items)` once for every caller's item of a batch; `write` answers one output
 * per item, in the items' order (each caller gets its own).
 */
export class Batcher<I, O> {
  private readonly slots = new Map<string, Slot<I, O>>();

  constructor(private readonly write: (key: string, items: I[]) => Promise<O[]>) {}

  async run(key: string, item: I): Promise<O> {
    const slot = this.slots.get(key);
    if (!slot) {
      const fresh: Slot<I, O> = { tail: Promise.resolve(), queued: null };
      this.slots.set(key, fresh);
      return (await this.launch(key, fresh, [item]))[0];
    }
    if (slot.queued) {
      const index = slot.queued.items.push(item) - 1;
      return (await slot.queued.result)[index];
    }
    const items = [item];
    const result = slot.tail.then(() => {
      // From here, callers that arrive queue behind this run.
      slot.queued = null;
      return this.launch(key, slot, items);
    });
    slot.queued = { items, result };
    return (await result)[0];
  }

  /** Whether a run of `key` is going (tests). */
  busy(key: string): boolean {
    return this.slots.has(key);
  }

  private launch(key: string, slot: Slot<I, O>, items: I[]): Promise<O[]> {
    const done = this.write(key, items).finally(() => {
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
 * A batch whose callers share one task's run (the first caller's: the callers of one key ask for
 * the same work). A run may produce a value (a read whose answer must be no older than the
 * caller's call): the callers of one run share it, so treat it as read-only.
 */
export class Coalescer<T = void> {
  private readonly batches = new Batcher<() => Promise<T>, T>(async (_key, tasks) => {
    const value = await tasks[0]();
    return tasks.map(() => value);
  });

  run(key: string, task: () => Promise<T>): Promise<T> {
    return this.batches.run(key, task);
  }

  /** Whether a run of `key` is going (tests). */
  busy(key: string): boolean {
    return this.batches.busy(key);
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
