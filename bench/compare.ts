/**
 * `node --import tsx bench/compare.ts dev=<bench output> cluster=<bench output>`: the figures of
 * two runs of the same sections side by side (scripts/bench.sh, BENCH_TEMPORAL=both): each
 * `target` line's value, and each `cpu over` line's CPU by role, with the second run's first
 * number over the first run's.
 */
import { readFileSync } from 'node:fs';

interface Run {
  label: string;
  targets: Map<string, string>;
  /** `cpu over <what>` -> roles and total, CPU seconds. */
  cpu: Map<string, { byRole: Map<string, number>; total: number; wall: number }>;
}

function parse(label: string, file: string): Run {
  const run: Run = { label, targets: new Map(), cpu: new Map() };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const t = /^target ([^:]+): (.*) \(goal .*\) (met|missed.*)$/.exec(line);
    if (t) run.targets.set(t[1], t[2]);
    const c = /^\s*cpu over (.*) \(([\d.]+) s wall\): (.*) = ([\d.]+) s$/.exec(line);
    if (c) {
      const byRole = new Map<string, number>();
      for (const part of c[3].split(', ')) {
        const m = /^(.*) ([\d.]+) s$/.exec(part);
        if (m) byRole.set(m[1], Number(m[2]));
      }
      // Each section measures its own baseline: the second one seen is "the baseline #2", and so on.
      let key = c[1];
      for (let n = 2; run.cpu.has(key); n++) key = `${c[1]} #${n}`;
      run.cpu.set(key, { byRole, total: Number(c[4]), wall: Number(c[2]) });
    }
  }
  return run;
}

/** The value's first number that is not part of a count "n/m" (1000/1000 invoices in 45.5 s: 45.5). */
const firstNumber = (s: string) => {
  const text = s.replace(/(\d),(\d{3})/g, '$1$2');
  for (const m of text.matchAll(/\d+(\.\d+)?/g)) {
    const before = text[m.index - 1];
    const after = text[m.index + m[0].length];
    if (before !== '/' && !(after === '/' && /\d/.test(text[m.index + m[0].length + 1] ?? ''))) return Number(m[0]);
  }
  return NaN;
};
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && a !== 0 ? `x${(b / a).toFixed(2)}` : '-');

function main() {
  const runs = process.argv.slice(2).map((arg) => {
    const i = arg.indexOf('=');
    return parse(arg.slice(0, i), arg.slice(i + 1));
  });
  if (runs.length !== 2) throw new Error('usage: compare.ts <label>=<file> <label>=<file>');
  const [a, b] = runs;
  const out: string[] = ['', `side by side: ${a.label} | ${b.label} (${b.label}/${a.label}), ${process.env.BENCH_WORKERS ?? 1} worker process(es)`];
  for (const key of new Set([...a.targets.keys(), ...b.targets.keys()])) {
    const va = a.targets.get(key) ?? '-';
    const vb = b.targets.get(key) ?? '-';
    out.push(`  ${key}: ${va} | ${vb} (${ratio(firstNumber(va), firstNumber(vb))})`);
  }
  for (const what of new Set([...a.cpu.keys(), ...b.cpu.keys()])) {
    const ca = a.cpu.get(what);
    const cb = b.cpu.get(what);
    out.push(`  cpu over ${what}: total ${ca?.total.toFixed(2) ?? '-'} s in ${ca?.wall.toFixed(1) ?? '-'} s wall | ${cb?.total.toFixed(2) ?? '-'} s in ${cb?.wall.toFixed(1) ?? '-'} s wall (${ratio(ca?.total ?? NaN, cb?.total ?? NaN)})`);
    const roles = [...new Set([...(ca?.byRole.keys() ?? []), ...(cb?.byRole.keys() ?? [])])];
    out.push(`    by role: ${roles.map((r) => `${r} ${ca?.byRole.get(r)?.toFixed(2) ?? '0'} | ${cb?.byRole.get(r)?.toFixed(2) ?? '0'}`).join(', ')}`);
  }
  console.log(out.join('\n'));
}

main();
