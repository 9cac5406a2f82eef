import { Batcher, Coalescer } from '../../src/lib/coalesce';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Coalescer', () => {
  it('runs once for a lone caller and forgets the key afterwards', async () => {
    const c = new Coalescer();
    let runs = 0;
    await c.run('k', async () => {
      runs += 1;
    });
    expect(runs).toBe(1);
    expect(c.busy('k')).toBe(false);
  });

  it('gives callers that arrive during a run one shared run that starts after it', async () => {
    const c = new Coalescer();
    const gates = [deferred(), deferred()];
    const started: number[] = [];
    let runs = 0;
    const task = () => {
      const n = runs++;
      started.push(n);
      return gates[n].promise;
    };
    const first = c.run('k', task);
    const joined = Array.from({ length: 5 }, () => c.run('k', task));
    await tick();
    expect(started).toEqual([0]); // the queued run waits for the first
    let joinedDone = false;
    void Promise.all(joined).then(() => (joinedDone = true));
    gates[0].resolve();
    await first;
    await tick();
    expect(started).toEqual([0, 1]);
    expect(joinedDone).toBe(false); // they wait for the run that began after they arrived
    gates[1].resolve();
    await Promise.all(joined);
    expect(runs).toBe(2);
    expect(c.busy('k')).toBe(false);
  });

  it('queues a third run for callers that arrive while the queued one runs', async () => {
    const c = new Coalescer();
    const gates = [deferred(), deferred(), deferred()];
    let runs = 0;
    const task = () => gates[runs++].promise;
    const a = c.run('k', task);
    const b = c.run('k', task);
    gates[0].resolve();
    await a;
    await tick();
    expect(runs).toBe(2);
    const late = c.run('k', task); // arrives while run 2 goes: must get run 3
    expect(late).not.toBe(b);
    gates[1].resolve();
    await b;
    await tick();
    expect(runs).toBe(3);
    gates[2].resolve();
    await late;
    expect(c.busy('k')).toBe(false);
  });

  it('keeps keys apart', async () => {
    const c = new Coalescer();
    const gate = deferred();
    let other = 0;
    const blocked = c.run('a', () => gate.promise);
    await c.run('b', async () => {
      other += 1;
    });
    expect(other).toBe(1);
    gate.resolve();
    await blocked;
  });

  it('hands a run\'s failure to its callers and still runs the queued one', async () => {
    const c = new Coalescer();
    const gate = deferred();
    let second = 0;
    const failing = c.run('k', () => gate.promise);
    const queued = c.run('k', async () => {
      second += 1;
    });
    gate.reject(new Error('database down'));
    await expect(failing).rejects.toThrow('database down');
    await queued;
    expect(second).toBe(1);
    expect(c.busy('k')).toBe(false);
  });

  it('shares a run\'s answer with its callers, each getting an answer read after its call', async () => {
    const c = new Coalescer<number>();
    let stored = 1;
    const gate = deferred();
    const first = c.run('k', async () => {
      const seen = stored;
      await gate.promise;
      return seen;
    });
    // Written while the first read is going: the callers after it must not get that read's answer.
    stored = 2;
    const second = c.run('k', async () => stored);
    const third = c.run('k', async () => stored * 100);
    gate.resolve();
    expect(await first).toBe(1);
    // One run served both, and it began after their calls.
    expect(await second).toBe(2);
    expect(await third).toBe(2);
  });
});

describe('Batcher', () => {
  it('serves the callers that arrive during a write with one write after it, each its own answer in call order', async () => {
    const gate = deferred();
    const writes: number[][] = [];
    let next = 1;
    const b = new Batcher<number, number[]>(async (_key, counts) => {
      writes.push([...counts]);
      if (writes.length === 1) await gate.promise;
      // Consecutive numbers for each caller, as one counter write of the sum would hand out.
      return counts.map((n) => Array.from({ length: n }, () => next++));
    });
    const first = b.run('k', 2);
    const later = [b.run('k', 1), b.run('k', 3), b.run('k', 1)];
    await tick();
    expect(writes).toEqual([[2]]); // the batch waits for the write going
    gate.resolve();
    expect(await first).toEqual([1, 2]);
    expect(await Promise.all(later)).toEqual([[3], [4, 5, 6], [7]]);
    expect(writes).toEqual([[2], [1, 3, 1]]);
    expect(b.busy('k')).toBe(false);
  });

  it('hands a failed write to every caller of its batch, and serves the next batch', async () => {
    const gate = deferred();
    let calls = 0;
    const b = new Batcher<string, string>(async (_key, items) => {
      calls += 1;
      if (calls === 1) await gate.promise;
      if (calls === 2) throw new Error('counter unreachable');
      return items.map((i) => i.toUpperCase());
    });
    const first = b.run('k', 'a');
    const failed = [b.run('k', 'b'), b.run('k', 'c')];
    gate.resolve();
    expect(await first).toBe('A');
    await expect(failed[0]).rejects.toThrow('counter unreachable');
    await expect(failed[1]).rejects.toThrow('counter unreachable');
    expect(await b.run('k', 'd')).toBe('D');
    expect(b.busy('k')).toBe(false);
  });
});
