/**
 * A section's run as data: `npm run bench -- <section> --json` writes what each section printed to
 * bench/results/<section>/<time>.json (committed: the run-by-run history lives in these files, and
 * bench/page.ts draws docs/benchmarks.md from the latest of each section). The figures are read
 * from the lines every section already prints (`target ...` by support.ts's target(), `cpu over ...`
 * by cpu.ts's cpuLine()), so the sections themselves know nothing of this file.
 */

/** A goal's comparison with the figure: lower is better for `<=` and `<`, higher for `>=` and `>`. */
export type Comparison = '<=' | '<' | '>=' | '>';

export interface TargetResult {
  /** The target's name within its section, e.g. `get-throughput-vs-baseline`. */
  name: string;
  /** The figure the goal is about, in `unit`; null when the line has none (a run that did not get that far). */
  value: number | null;
  /** `x` (a ratio to a baseline of the same run), `ms`, `s`, `/s` or `MiB`; null when the goal names no figure. */
  unit: string | null;
  goal: number | null;
  comparison: Comparison | null;
  met: boolean;
  /** `met`, `missed`, or `missed (reduced size)`: a goal is for the section's full size only. */
  status: string;
  /** The value and the goal as printed, with their context (`x0.52 (1899 vs 3653 req/s)`). */
  valueText: string;
  goalText: string;
}

/** A `cpu over <what> (<s> s wall): <role> <s> s, ... = <total> s` line: CPU seconds by process role. */
export interface CpuFigure {
  what: string;
  wallSeconds: number;
  totalSeconds: number;
  byRole: Record<string, number>;
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
}

export interface SectionResult {
  section: string;
  /** When the run started (ISO 8601, UTC); every section of one run shares it. */
  date: string;
  /** HEAD when the run started; `dirty`: the work tree had uncommitted changes to tracked files. */
  commit: string | null;
  dirty: boolean;
  machine: Machine;
  /** The stack it ran on: the Temporal server, worker processes, the database. */
  stack: { temporal: string; workers: number; database: string };
  /**
   * The section's size: its heading as printed (`== API (10,000 customers) ==`), the BENCH_*
   * settings given to this run (none: the full size), and whether a target says it ran reduced.
   */
  size: { heading: string; settings: Record<string, string>; reduced: boolean };
  seconds: number;
  targets: TargetResult[];
  cpu: CpuFigure[];
  /** Everything the section printed, in order. */
  lines: string[];
  /** Copied by hand from an earlier record of the run (no printed lines were kept). */
  transcribed?: boolean;
}

const NUMBER = String.raw`\d[\d,]*(?:\.\d+)?`;
const UNIT = String.raw`(ms|MiB|/s|s)(?![A-Za-z])`;
const TARGET_LINE = /^target ([^/:\s]+)\/([^:]+): (.*) \(goal (.*)\) (met|missed(?: \(reduced size\))?)$/;
const CPU_LINE = /^\s*cpu over (.*) \(([\d.]+) s wall\): (.*) = ([\d.]+) s$/;

const toNumber = (s: string) => Number(s.replace(/,/g, ''));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * The goal's figure: a goal starts with its comparison and figure (`>= x0.5`, `< 250 ms`,
 * `>= 200/s, all allocated`, `<= 20 s for 1000/1000 invoices`); anything after it is context.
 */
export function parseGoal(text: string): { comparison: Comparison; goal: number; unit: string } | null {
  const m = new RegExp(String.raw`^(<=|>=|<|>)\s*(?:x(${NUMBER})|(${NUMBER})\s*${UNIT})`).exec(text);
  if (!m) return null;
  return m[2] !== undefined ? { comparison: m[1] as Comparison, goal: toNumber(m[2]), unit: 'x' } : { comparison: m[1] as Comparison, goal: toNumber(m[3]), unit: m[4] };
}

/**
 * The value's figure in the goal's unit: its first number in that unit (`x1.10 (12.0 ms -> 13.2 ms)`
 * against `<= x1.5` is 1.10; `1000/1000 invoices in 12.3 s` against `<= 20 s` is 12.3).
 */
export function figureIn(text: string, unit: string): number | null {
  const pattern = unit === 'x' ? String.raw`(?<![\w.])x(${NUMBER})` : String.raw`(?<![\d.,/])(${NUMBER})\s*${escape(unit)}(?![A-Za-z])`;
  const m = new RegExp(pattern).exec(text);
  return m ? toNumber(m[1]) : null;
}

/** A `target <section>/<name>: <value> (goal <goal>) met|missed` line (support.ts target()), or null. */
export function parseTarget(line: string): (TargetResult & { section: string }) | null {
  const m = TARGET_LINE.exec(line);
  if (!m) return null;
  const [, section, name, valueText, goalText, status] = m;
  const goal = parseGoal(goalText);
  return {
    section,
    name,
    value: goal ? figureIn(valueText, goal.unit) : null,
    unit: goal?.unit ?? null,
    goal: goal?.goal ?? null,
    comparison: goal?.comparison ?? null,
    met: status === 'met',
    status,
    valueText,
    goalText,
  };
}

/** A `cpu over ...` line (cpu.ts cpuLine()), or null. */
export function parseCpuLine(line: string): CpuFigure | null {
  const m = CPU_LINE.exec(line);
  if (!m) return null;
  const byRole: Record<string, number> = {};
  for (const part of m[3].split(', ')) {
    const r = /^(.*) ([\d.]+) s$/.exec(part);
    if (r) byRole[r[1]] = Number(r[2]);
  }
  return { what: m[1], wallSeconds: Number(m[2]), totalSeconds: Number(m[4]), byRole };
}

export interface RunContext {
  date: Date;
  commit: string | null;
  dirty: boolean;
  machine: Machine;
  stack: SectionResult['stack'];
  settings: Record<string, string>;
}

/** What a section printed, as a result: its targets (those of other sections are refused) and CPU lines. */
export function sectionResult(section: string, lines: string[], seconds: number, run: RunContext): SectionResult {
  const targets: TargetResult[] = [];
  for (const line of lines) {
    const t = parseTarget(line);
    if (!t) continue;
    if (t.section !== section) throw new Error(`section ${section} printed a target of section ${t.section}: ${line}`);
    const { section: _, ...target } = t;
    targets.push(target);
  }
  return {
    section,
    date: run.date.toISOString(),
    commit: run.commit,
    dirty: run.dirty,
    machine: run.machine,
    stack: run.stack,
    size: { heading: lines.find((l) => l.trim() !== '')?.trim() ?? '', settings: run.settings, reduced: targets.some((t) => t.status.includes('reduced')) },
    seconds: Math.round(seconds * 10) / 10,
    targets,
    cpu: lines.map(parseCpuLine).filter((c): c is CpuFigure => c !== null),
    lines,
  };
}

/** `2026-11-26T23-40-05Z.json`: sorts by time, and is a valid file name everywhere. */
export function resultFileName(date: Date): string {
  return `${date.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/:/g, '-')}.json`;
}

/** The latest result among `results` (by date, then by order given). */
export function latest(results: SectionResult[]): SectionResult | undefined {
  return results.reduce<SectionResult | undefined>((best, r) => (!best || r.date >= best.date ? r : best), undefined);
}
