/**
 * `node --import tsx bench/compare.ts dev=<bench output> cluster=<bench output>`: the figures of
 * two runs of the same sections side by side (scripts/bench.sh, BENCH_TEMPORAL=both): each
 * `target` line's value, and each `cpu over` line's CPU by role, with the second run's figure
 * (the one its goal is about, bench/results.ts) over the first run's.
 */
import { readFileSync } from 'node:fs';
import { CpuFigure, parseCpuLine, parseTarget, TargetResult } from './results';

interface Run {
  label: string;
  /** `<section>/<name>` -> the target as printed and read (bench/results.ts). */
  targets: Map<string, TargetResult>;
  /** `cpu over <what>` -> roles and total, CPU seconds. */
  cpu: Map<string, CpuFigure>;
}

function parse(label: string, file: string): Run {
  const run: Run = { label, targets: new Map(), cpu: new Map() };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const t = parseTarget(line);
    if (t) run.targets.set(`${t.section}/${t.name}`, t);
    const c = parseCpuLine(line);
    if (c) {
      // Each section measures its own baseline: the second one seen is "the baseline #2", and so on.
      let key = c.what;
      for (let n = 2; run.cpu.has(key); n++) key = `${c.what} #${n}`;
      run.cpu.set(key, c);
    }
  }
  return run;
}

const ratio = (a: number | null | undefined, b: number | null | undefined) => (a != null && b != null && Number.isFinite(a) && Number.isFinite(b) && a !== 0 ? `x${(b / a).toFixed(2)}` : '-');

function main() {
  const runs = process.argv.slice(2).map((arg) => {
    const i = arg.indexOf('=');
    return parse(arg.slice(0, i), arg.slice(i + 1));
  });
  if (runs.length !== 2) throw new Error('usage: compare.ts <label>=<file> <label>=<file>');
  const [a, b] = runs;
  const out: string[] = ['', `side by side: ${a.label} | ${b.label} (${b.label}/${a.label}), ${process.env.BENCH_WORKERS ?? 1} worker process(es)`];
  for (const key of new Set([...a.targets.keys(), ...b.targets.keys()])) {
    const ta = a.targets.get(key);
    const tb = b.targets.get(key);
    out.push(`  ${key}: ${ta?.valueText ?? '-'} | ${tb?.valueText ?? '-'} (${ratio(ta?.value, tb?.value)})`);
  }
  for (const what of new Set([...a.cpu.keys(), ...b.cpu.keys()])) {
    const ca = a.cpu.get(what);
    const cb = b.cpu.get(what);
    out.push(`  cpu over ${what}: total ${ca?.totalSeconds.toFixed(2) ?? '-'} s in ${ca?.wallSeconds.toFixed(1) ?? '-'} s wall | ${cb?.totalSeconds.toFixed(2) ?? '-'} s in ${cb?.wallSeconds.toFixed(1) ?? '-'} s wall (${ratio(ca?.totalSeconds, cb?.totalSeconds)})`);
    const roles = [...new Set([...Object.keys(ca?.byRole ?? {}), ...Object.keys(cb?.byRole ?? {})])];
    out.push(`    by role: ${roles.map((r) => `${r} ${ca?.byRole[r]?.toFixed(2) ?? '0'} | ${cb?.byRole[r]?.toFixed(2) ?? '0'}`).join(', ')}`);
  }
  console.log(out.join('\n'));
}

main();
