import autocannon from 'autocannon';

export interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** Requests answered over the run. */
  requests: number;
}

export async function measure(name: string, opts: autocannon.Options): Promise<Measured> {
  const result = await autocannon({ connections: 10, duration: 5, timeout: 30, ...opts });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${name}: ${result.non2xx} non-2xx responses, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total };
}

export function row(m: Measured, baseline?: Measured): string {
  const ratio = baseline ? `  throughput x${(m.rps / baseline.rps).toFixed(2)} of baseline, p50 x${(m.p50 / Math.max(baseline.p50, 0.001)).toFixed(2)}` : '  (baseline)';
  return `${m.name.padEnd(44)} ${m.rps.toFixed(0).padStart(7)} req/s  p50 ${m.p50.toFixed(1).padStart(6)} ms  p99 ${m.p99.toFixed(1).padStart(6)} ms${ratio}`;
}

/**
 * The one summary line per target that every section ends with:
 * `target <section>/<name>: <value> (goal <goal>) met` (or `missed`). A goal is defined for the
 * section's full size: measured at a reduced size (`fullSize` false) it is never `met`, whatever
 * the value, but `missed (reduced size)`. The goal starts with its comparison and figure
 * (`>= x0.5`, `< 250 ms`, `<= 20 s for ...`) and the value holds a figure in the same unit
 * (`x` for a ratio): bench/results.ts reads both from the line for `--json`.
 */
export function target(section: string, name: string, value: string, goal: string, met: boolean, fullSize = true): string {
  return `target ${section}/${name}: ${value} (goal ${goal}) ${!fullSize ? 'missed (reduced size)' : met ? 'met' : 'missed'}`;
}

/** Polls `fn` every `everyMs` until it answers something truthy, which it returns; throws after `timeoutMs`. */
export async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, everyMs: number, timeoutMs = 10 * 60_000): Promise<T> {
  const v = await poll(fn, everyMs, timeoutMs);
  if (v === null) throw new Error(`bench: timed out waiting for ${what}`);
  return v;
}

/** `fn` every `everyMs` until it answers (its answer), or null once `timeoutMs` have passed without. */
async function poll<T>(fn: () => Promise<T | null | undefined | false>, everyMs: number, timeoutMs: number): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) return null;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Waits, outside any window, until every reader answers (the account's report rollups current
 * again: the rebuilds an operation's marks left due, ADR 0316), so that they fall in no later
 * window (a floor's round, the baseline). Seconds waited, or null after `timeoutMs` without.
 */
export async function settled(readers: (() => Promise<unknown>)[], timeoutMs = 60_000): Promise<number | null> {
  const started = Date.now();
  const allAnswer = async () => {
    const answers = [];
    for (const read of readers) answers.push(await read());
    return answers.every(Boolean);
  };
  return (await poll(allAnswer, 250, timeoutMs)) ? (Date.now() - started) / 1000 : null;
}

/** The p-th percentile (nearest rank) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs fn over items with `lanes` of them in flight at a time. */
export async function pool<T>(items: T[], lanes: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(lanes, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

/**
 * A direct database write for a baseline, retried when FerretDB on SQLite answers
 * "database is locked" (SQLITE_BUSY) because the service's processes are writing too.
 * `retried.count` says how many retries it took.
 */
export async function retryBusy<T>(fn: () => Promise<T>, retried: { count: number }): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 10 || !/database is locked|SQLITE_BUSY/.test(String((err as Error)?.message))) throw err;
      retried.count += 1;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}

/** Documents written straight through the driver, 500 an `insertMany` (seeding a bench's data). */
export async function insertInBatches(model: { collection: { insertMany(docs: object[], opts: object): Promise<unknown> } }, docs: object[]): Promise<void> {
  for (let i = 0; i < docs.length; i += 500) await model.collection.insertMany(docs.slice(i, i + 500), { ordered: false });
}
