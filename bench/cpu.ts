/**
 * CPU seconds spent by every process of the stack bench.sh started (API, worker, Temporal,
 * FerretDB, PostgreSQL, the dev chain) and by the bench process itself (the client and, in the
 * webhooks section, the worker it runs), read from /proc over a measured window. On a shared
 * machine a rate swings with the neighbours' load; the CPU an operation costs, set against the
 * CPU of a plain insert measured in the same run, carries from one machine to another.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { target } from './support';

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on every architecture Node runs on here. */
const TICKS_PER_SECOND = 100;

interface ProcessTicks {
  role: string;
  ticks: number;
}

/** One reading of every process under the stack's root: pid -> its role and CPU ticks so far. */
export type CpuReading = Map<number, ProcessTicks>;

/**
 * What a process is, from its program (argv[0]; a PostgreSQL backend renames itself "postgres: ...")
 * and, for node, its script. The real Temporal server's services (temporal-server, argv[0]) count as
 * 'temporal' like the dev server (temporal), the PostgreSQL backends serving its databases as
 * 'postgresql-temporal'.
 */
function roleOf(pid: number, argv: string[]): string {
  if (pid === process.pid) return 'bench';
  const program = (argv[0] ?? '').split('/').pop() ?? '';
  // The real Temporal server's backends (its databases temporal and temporal_visibility on the same
  // PostgreSQL, BENCH_TEMPORAL=cluster): a backend's title is "postgres: <user> <database> ...".
  if (/^postgres: \S+ temporal(_visibility)? /.test(argv.join(' '))) return 'postgresql-temporal';
  if (program.startsWith('postgres')) return 'postgresql';
  if (program === 'ferretdb') return 'ferretdb';
  if (program.startsWith('temporal')) return 'temporal';
  const args = argv.slice(1).join(' ');
  if (/worker\.ts/.test(args)) return 'worker';
  if (/server\.ts|api\/cluster/.test(args)) return 'api';
  if (/ganache/.test(args)) return 'chain';
  return program || 'other';
}

function readStat(pid: number): { ppid: number; ticks: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields follow its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 4 (ppid), 14-17 (utime, stime, cutime, cstime), counted from 1; fields[0] is field 3.
    const ppid = Number(fields[1]);
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return { ppid, ticks };
  } catch {
    return null; // exited between the listing and the read
  }
}

/**
 * Every descendant of `rootPid` and the bench process. A process's own time and that of the
 * children it has reaped (cutime): a PostgreSQL backend that exits is counted in the postmaster.
 */
export function readCpu(rootPid: number = Number(process.env.BENCH_STACK_PID ?? process.ppid)): CpuReading {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) stats.set(Number(name), s);
  }
  const inStack = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
      const s = stats.get(p);
      if (!s) return false;
      if (s.ppid === rootPid) return true;
      p = s.ppid;
    }
    return false;
  };
  const reading: CpuReading = new Map();
  for (const [pid, s] of stats) {
    if (pid !== process.pid && !inStack(pid)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    reading.set(pid, { role: roleOf(pid, argv), ticks: s.ticks });
  }
  return reading;
}

/** CPU seconds per role between two readings (a process started in between counts whole). */
export interface CpuWindow {
  byRole: Record<string, number>;
  total: number;
}

export function cpuBetween(before: CpuReading, after: CpuReading): CpuWindow {
  const byRole: Record<string, number> = {};
  let total = 0;
  for (const [pid, now] of after) {
    const delta = (now.ticks - (before.get(pid)?.ticks ?? 0)) / TICKS_PER_SECOND;
    if (delta <= 0) continue;
    byRole[now.role] = (byRole[now.role] ?? 0) + delta;
    total += delta;
  }
  return { byRole, total };
}

/** Measures fn's window. */
export async function withCpu<T>(fn: () => Promise<T>): Promise<{ result: T; cpu: CpuWindow; seconds: number }> {
  const before = readCpu();
  const started = performance.now();
  const result = await fn();
  const seconds = (performance.now() - started) / 1000;
  return { result, cpu: cpuBetween(before, readCpu()), seconds };
}

/** `cpu over <what> (<s> s wall): api 1.23 s, worker ... = total`, roles largest first. */
export function cpuLine(what: string, w: CpuWindow, wallSeconds: number): string {
  const parts = Object.entries(w.byRole)
    .sort((a, b) => b[1] - a[1])
    .map(([role, s]) => `${role} ${s.toFixed(2)} s`);
  return `  cpu over ${what} (${wallSeconds.toFixed(1)} s wall): ${parts.join(', ')} = ${w.total.toFixed(2)} s`;
}

/** Where the baseline writes: a model's driver collection. */
export interface BaselineCollection {
  insertOne(doc: Record<string, unknown>): Promise<unknown>;
  deleteMany(filter: Record<string, unknown>): Promise<unknown>;
}

export interface InsertBaseline {
  /** CPU milliseconds of one plain insert, every process counted. */
  cpuMs: number;
  perSecond: number;
  line: string;
}

/**
 * The baseline every `cpu-per-<op>` is set against: `count` transaction-sized documents inserted
 * one at a time through the driver into `collection`, the CPU of every process counted (the
 * bench's driver, FerretDB and PostgreSQL do the work; the others idle as they do throughout).
 */
export async function measureInsertBaseline(collection: BaselineCollection, count = 2000): Promise<InsertBaseline> {
  const { cpu, seconds } = await withCpu(async () => {
    for (let i = 0; i < count; i++) {
      await collection.insertOne({
        _id: `bench-baseline-${randomBytes(8).toString('hex')}`,
        account_id: 'bench-baseline',
        amount: '0.001',
        transaction_id: randomBytes(32).toString('hex'),
        dedupe_key: randomBytes(16).toString('hex'),
      });
    }
  });
  await collection.deleteMany({ account_id: 'bench-baseline' });
  const cpuMs = (cpu.total * 1000) / count;
  return {
    cpuMs,
    perSecond: count / seconds,
    line: `  baseline: ${count} plain inserts through the driver, ${(count / seconds).toFixed(0)}/s, ${cpuMs.toFixed(3)} ms CPU each (all processes)\n${cpuLine('the baseline', cpu, seconds)}`,
  };
}

/**
 * `target <section>/cpu-per-<op>: x<ratio> of a plain insert (<ms> ms) (goal <= x<goal>) met|missed`.
 * The goal is half of the ratio the first run of this measurement printed, or the floor measured in
 * the run plus 20% when that lies above it (issue 27; bench/floor.ts), with what it is as its label.
 */
export function cpuTarget(section: string, op: string, cpu: CpuWindow, operations: number, baseline: InsertBaseline, goal: number | { ratio: number; label: string }, fullSize: boolean): string {
  const ms = (cpu.total * 1000) / Math.max(1, operations);
  const ratio = ms / baseline.cpuMs;
  const { ratio: goalRatio, label } = typeof goal === 'number' ? { ratio: goal, label: '' } : goal;
  return target(section, `cpu-per-${op}`, `x${ratio.toFixed(1)} of a plain insert (${ms.toFixed(2)} ms)`, `<= x${goalRatio.toFixed(1)}${label ? ` (${label})` : ''}`, ratio <= goalRatio, fullSize);
}
