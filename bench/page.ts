/**
 * `npm run bench:page`: docs/benchmarks.md, and a chart per section (docs/benchmarks/<section>.svg),
 * from the latest result of each section in bench/results/ (`npm run bench -- <section> --json`).
 * The charts are Vega-Lite specs compiled by `vega-lite` and drawn by `vega`'s View.toSVG() in
 * this process: no browser and no canvas. `--results <dir>` and `--out <dir>` (the folder that gets
 * benchmarks.md and benchmarks/) read and write elsewhere.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// vega-lite declares its types through package exports only, which this project's module
// resolution (node10) does not read: the types come from their file, the module from Node.
import type * as VegaLite from 'vega-lite/build/index';
import type { TopLevelSpec } from 'vega-lite/build/index';
import { latest, SectionResult, TargetResult } from './results';

const ROOT = path.join(__dirname, '..');

/** Every result file of every section: section -> its results. */
export function readResults(dir: string): Map<string, SectionResult[]> {
  const bySection = new Map<string, SectionResult[]>();
  for (const section of readdirSync(dir, { withFileTypes: true })) {
    if (!section.isDirectory()) continue;
    const files = readdirSync(path.join(dir, section.name)).filter((f) => f.endsWith('.json')).sort();
    const results = files.map((f) => JSON.parse(readFileSync(path.join(dir, section.name, f), 'utf8')) as SectionResult);
    if (results.length) bySection.set(section.name, results);
  }
  return bySection;
}

const figure = (n: number, unit: string | null) => (unit === 'x' ? `x${n}` : unit === '/s' ? `${n}/s` : `${n} ${unit ?? ''}`.trim());
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const day = (iso: string) => iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');

/** A target's figure over its goal (1: exactly the goal), or null without both. */
export function shareOfGoal(t: TargetResult): number | null {
  return t.value !== null && t.goal !== null && t.goal !== 0 ? t.value / t.goal : null;
}

/** The chart of a section's targets: a bar per target, its figure over its goal, with the goal as a rule at 1. */
export function chartSpec(result: SectionResult): TopLevelSpec {
  const rows = result.targets.map((t) => {
    const share = shareOfGoal(t);
    return {
      target: t.name,
      share: share ?? 0,
      status: share === null ? 'no figure' : t.status,
      label: t.value === null ? `no figure (goal ${t.goalText})` : `${figure(t.value, t.unit)} (goal ${t.comparison ?? ''} ${figure(t.goal!, t.unit)})`,
    };
  });
  const largest = Math.max(2, ...rows.map((r) => r.share));
  const domainMax = Math.min(5, Math.ceil(largest * 2) / 2);
  const y = { field: 'target', type: 'nominal' as const, sort: null, title: null, axis: { labelLimit: 260 } };
  const x = { field: 'share', type: 'quantitative' as const, scale: { domain: [0, domainMax], clamp: true } };
  return {
    title: {
      text: `${result.section}: each target's figure over its goal`,
      subtitle: [`${when(result)}, commit ${result.commit?.slice(0, 10) ?? 'unknown'}${result.transcribed ? ' (transcribed)' : ''}`, 'the goal is 1: a <= goal is met left of it, a >= goal right of it'],
      anchor: 'start',
    },
    width: 520,
    background: 'white',
    padding: 12,
    data: { values: rows },
    layer: [
      {
        mark: { type: 'bar', height: { band: 0.6 } },
        encoding: {
          y,
          x: { ...x, title: `figure ÷ goal${largest > domainMax ? ` (cut at ${domainMax})` : ''}` },
          color: {
            field: 'status',
            type: 'nominal',
            scale: { domain: ['met', 'missed', 'missed (reduced size)', 'no figure'], range: ['#2e7d32', '#c62828', '#ef6c00', '#9e9e9e'] },
            legend: { title: null, orient: 'bottom', labelLimit: 220 },
          },
        },
      },
      { data: { values: [{}] }, mark: { type: 'rule', strokeDash: [4, 3], color: '#333' }, encoding: { x: { datum: 1 } } },
      { mark: { type: 'text', align: 'left', dx: 4, fontSize: 10 }, encoding: { y, x, text: { field: 'label' } } },
    ],
  };
}

/**
 * The chart as SVG: Vega-Lite compiled to Vega, drawn headless. Both are ES modules with a
 * top-level await (vega-canvas looks for an optional canvas), so they are imported, not required.
 */
export async function renderChart(spec: TopLevelSpec): Promise<string> {
  const vegaLite = 'vega-lite';
  const [{ compile }, { parse, View }] = await Promise.all([import(vegaLite) as Promise<typeof VegaLite>, import('vega')]);
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** The run's time; a transcribed result knows its day only. */
const when = (r: SectionResult) => (r.transcribed ? r.date.slice(0, 10) : day(r.date));
const heading = (r: SectionResult) => r.size.heading.replace(/^=+\s*|\s*=+$/g, '');

function sectionPage(result: SectionResult, runs: SectionResult[], chart: string): string[] {
  const met = result.targets.filter((t) => t.met).length;
  const settings = Object.entries(result.size.settings).map(([k, v]) => `\`${k}=${v}\``).join(', ');
  const first = runs[0];
  return [
    `## ${result.section}`,
    '',
    `${heading(result) ? `${cell(heading(result))}: ` : ''}${result.size.reduced ? 'run at a reduced size, so no goal counts as met' : 'full size'}${settings ? ` (${settings})` : ''}.`,
    `Latest run: ${when(result)}, commit \`${result.commit?.slice(0, 10) ?? 'unknown'}\`${result.dirty ? ' with uncommitted changes' : ''}${result.transcribed ? ' (transcribed from an earlier written record: figures only)' : ''}, ` +
      `${result.machine.cpu} (${result.machine.cores} cores), ${result.stack.temporal}, ${result.stack.workers} worker process(es), ${result.stack.database}${result.seconds ? `; ${result.seconds} s` : ''}.`,
    `${met} of ${result.targets.length} targets met. ${runs.length} result${runs.length === 1 ? '' : 's'} in [bench/results/${result.section}/](../bench/results/${result.section}/)${runs.length > 1 ? ` since ${day(first.date).slice(0, 10)}` : ''}.`,
    '',
    `![${result.section}: each target's figure over its goal](${chart})`,
    '',
    '| target | measured | goal | |',
    '|---|---|---|---|',
    ...result.targets.map((t) => `| \`${t.name}\` | ${cell(t.valueText)} | ${cell(t.goalText)} | ${t.status} |`),
    '',
    ...(result.lines.length
      ? ['<details><summary>Everything the section printed</summary>', '', '```text', ...result.lines, '```', '', '</details>', '']
      : []),
  ];
}

const INTRO = [
  '# Benchmarks',
  '',
  '<!-- Written by `npm run bench:page` from bench/results/; edits here are overwritten. -->',
  '',
  '`npm run bench` starts the whole service (API, worker, Temporal dev server, FerretDB on PostgreSQL)',
  'on free ports with throwaway data and measures it from loopback; `npm run bench -- api` runs one',
  'section. With `--json` (`npm run bench -- api --json`) each section also writes its result to',
  '`bench/results/<section>/<time>.json`: every `target` line as data (figure, unit, goal, met or',
  'missed), the CPU by process, the machine, the commit and what it printed. `npm run bench:page`',
  'then redraws this page from the latest result of each section. The run-by-run history is those',
  'files; this page shows the latest only. Results marked transcribed were copied by hand from the',
  'written record of runs made before results were recorded: their figures, without the printout.',
  '',
  'Most goals are ratios against a baseline measured in the same run on the same machine, so they',
  'carry from one machine to another where a rate would not: a bare Koa route reading one document',
  '(`api`), the first page of a list (`reports`), the first stage of the same run (`scale`), the same',
  'payment or page view before its payer had a history (`payment-history`).',
  "`cpu-per-<operation>` is the CPU time every process of the stack spent per operation (the API,",
  'the worker, Temporal, FerretDB, PostgreSQL and the bench itself, read from /proc), over the CPU of',
  'one plain insert through the driver measured in the same run: x20 means an operation costs as much',
  'CPU as 20 plain inserts. Its goal is half of the ratio its first run printed, unless the floor',
  'measured in the same run lies above that: the same operation done with the least the contract and',
  'the design ask (a bare HTTP server, the driver\'s statements, one workflow per operation with its',
  'work in one local activity; `bench/floor.ts`); the goal is then the floor plus 20%, and the',
  'target names it. A payment, a delivery and a renewal are measured in rounds alternating with',
  "their floor (S F F S S F F S, `bench/rounds.ts`), so that the machine's drift during a run weighs",
  'on both alike; a renewal\'s rounds are groups of subscriptions with billing instants of their own,',
  'after the burst of 1,000 at one instant that the 20 s goal is for.',
  'The other goals are absolute (seconds, deliveries a second, MiB). A goal',
  'holds for the section\'s full size: a run at a reduced size (a `BENCH_*` size setting) shows its',
  'figures but never counts as met.',
  '',
  "Each chart shows a section's targets as their figure divided by their goal, with the goal at 1:",
  'a `<=` goal is met left of the line, a `>=` goal right of it; the colour says met or missed.',
  '',
];

export async function writePage(resultsDir: string, outDir: string): Promise<string[]> {
  const bySection = readResults(resultsDir);
  const sections = [...bySection.keys()].sort();
  const chartsDir = path.join(outDir, 'benchmarks');
  mkdirSync(chartsDir, { recursive: true });
  const written: string[] = [];
  const summary = ['| section | latest run | commit | targets met |', '|---|---|---|---|'];
  const body: string[] = [];
  for (const section of sections) {
    const runs = bySection.get(section)!;
    const result = latest(runs)!;
    const chartFile = path.join(chartsDir, `${section}.svg`);
    writeFileSync(chartFile, await renderChart(chartSpec(result)));
    written.push(chartFile);
    const met = result.targets.filter((t) => t.met).length;
    summary.push(`| [${section}](#${section}) | ${when(result)}${result.size.reduced ? ' (reduced size)' : ''} | ${result.transcribed ? 'transcribed' : `\`${result.commit?.slice(0, 10) ?? 'unknown'}\``} | ${met} of ${result.targets.length} |`);
    body.push(...sectionPage(result, runs, `benchmarks/${section}.svg`));
  }
  const page = path.join(outDir, 'benchmarks.md');
  writeFileSync(page, `${[...INTRO, ...summary, '', ...body].join('\n').trimEnd()}\n`);
  written.push(page);
  return written;
}

if (require.main === module) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 && process.argv[i + 1] ? path.resolve(process.argv[i + 1]) : fallback;
  };
  writePage(arg('--results', path.join(ROOT, 'bench', 'results')), arg('--out', path.join(ROOT, 'docs')))
    .then((files) => console.log(files.map((f) => `wrote ${path.relative(process.cwd(), f)}`).join('\n')))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
