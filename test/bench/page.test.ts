/**
 * `npm run bench:page` (bench/page.ts) on fixture results: docs/benchmarks.md gets a table per
 * section from its latest result only, and each section a chart, an SVG drawn by Vega in Node
 * with one bar per target. Run as the command is (vega and vega-lite are ES modules, loaded by
 * Node itself rather than Jest's module system).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { cpuLine } from '../../bench/cpu';
import { resultFileName, RunContext, sectionResult } from '../../bench/results';
import { target } from '../../bench/support';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

const context = (date: string, commit: string): RunContext => ({
  date: new Date(date),
  commit,
  dirty: false,
  machine: { cpu: 'Fixture CPU @ 2.00GHz', cores: 2, memoryGiB: 24, os: 'Linux 6.1', node: 'v20.20.2' },
  stack: { temporal: 'Temporal dev server', workers: 1, database: 'FerretDB on postgresql' },
  settings: {},
});

const fixtures = [
  sectionResult('api', ['== API (10,000 customers) ==', target('api', 'get-throughput-vs-baseline', 'x0.31 (900 vs 2900 req/s)', '>= x0.5', false)], 40, context('2026-11-20T10:00:00Z', 'aaaaaaaaaa11')),
  sectionResult(
    'api',
    [
      '== API (10,000 customers) ==',
      target('api', 'get-throughput-vs-baseline', 'x0.52 (1899 vs 3653 req/s)', '>= x0.5', true),
      target('api', 'last-page-vs-first-page-p50', 'x2.40 (2.1 -> 5.0 ms)', '<= x2', false),
    ],
    41,
    context('2026-11-26T23:40:05Z', 'bbbbbbbbbb22'),
  ),
  sectionResult(
    'crypto',
    [
      'crypto: 1000 manual transactions over 100 customers (5 open invoices each)',
      cpuLine('1000 payments recorded and allocated', { byRole: { worker: 13, ferretdb: 8 }, total: 21 }, 20),
      target('crypto', 'cpu-per-payment', 'x14.0 of a plain insert (21.00 ms)', '<= x17.3', true),
      target('crypto', 'allocations-per-s', '54.9/s (1000/1000 allocated)', '>= 200/s, all allocated', false),
      target('crypto', 'never-finished', '0/1000 (stopped early)', '<= 20 s for 1000/1000', false),
    ],
    90,
    context('2026-11-26T22:00:00Z', 'cccccccccc33'),
  ),
];

let dir: string;
let page: string;
const svg = (section: string) => readFileSync(join(dir, 'docs', 'benchmarks', `${section}.svg`), 'utf8');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bench-page-'));
  for (const f of fixtures) {
    mkdirSync(join(dir, 'results', f.section), { recursive: true });
    writeFileSync(join(dir, 'results', f.section, resultFileName(new Date(f.date))), JSON.stringify(f));
  }
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/page.ts', '--results', join(dir, 'results'), '--out', join(dir, 'docs')], { cwd: root, encoding: 'utf8' });
  expect(stdout).toContain('benchmarks.md');
  page = readFileSync(join(dir, 'docs', 'benchmarks.md'), 'utf8');
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the benchmarks page', () => {
  it('says how to run the benches and what the ratios mean', () => {
    expect(page).toMatch(/^# Benchmarks\n/);
    expect(page).toContain('npm run bench -- api --json');
    expect(page).toContain('npm run bench:page');
    expect(page).toMatch(/CPU of\s+one plain insert/);
  });

  it("has a table per section from that section's latest result only", () => {
    const tableOf = (section: string) => {
      const start = page.indexOf(`## ${section}\n`);
      expect(start).toBeGreaterThan(0);
      const end = page.indexOf('\n## ', start + 1);
      return page.slice(start, end < 0 ? undefined : end).split('\n').filter((l) => l.startsWith('| `'));
    };
    expect(tableOf('api')).toEqual([
      '| `get-throughput-vs-baseline` | x0.52 (1899 vs 3653 req/s) | >= x0.5 | met |',
      '| `last-page-vs-first-page-p50` | x2.40 (2.1 -> 5.0 ms) | <= x2 | missed |',
    ]);
    expect(tableOf('crypto')).toEqual([
      '| `cpu-per-payment` | x14.0 of a plain insert (21.00 ms) | <= x17.3 | met |',
      '| `allocations-per-s` | 54.9/s (1000/1000 allocated) | >= 200/s, all allocated | missed |',
      '| `never-finished` | 0/1000 (stopped early) | <= 20 s for 1000/1000 | missed |',
    ]);
    // The older api run is history in its file, not on the page.
    expect(page).not.toContain('x0.31');
    expect(page).toContain('2 results in [bench/results/api/](../bench/results/api/) since 2026-11-20');
    expect(page).toContain('| [api](#api) | 2026-11-26 23:40 UTC | `bbbbbbbbbb` | 1 of 2 |');
    expect(page).toContain('| [crypto](#crypto) | 2026-11-26 22:00 UTC | `cccccccccc` | 1 of 3 |');
    expect(page).toContain('![api: each target\'s figure over its goal](benchmarks/api.svg)');
    expect(page).toContain('Fixture CPU @ 2.00GHz (2 cores)');
  });

  it('draws each section as a well-formed SVG with one bar per target, coloured by its status', () => {
    for (const [section, targets] of [['api', 2], ['crypto', 3]] as const) {
      const text = svg(section);
      expect(XMLValidator.validate(text)).toBe(true);
      const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(text);
      expect(Object.keys(doc)).toContain('svg');
      // Vega draws a bar mark as a group of class mark-rect holding one path per item.
      const bars = [...text.matchAll(/<g class="mark-rect role-mark[^"]*"[^>]*>(.*?)<\/g>/gs)];
      expect(bars).toHaveLength(1);
      expect(bars[0][1].match(/<path /g)).toHaveLength(targets);
    }
    // met green, missed red, no figure grey.
    const crypto = svg('crypto');
    const fills = [...crypto.matchAll(/<g class="mark-rect role-mark[^"]*"[^>]*>(.*?)<\/g>/gs)][0][1].match(/fill="#[0-9a-f]{6}"/g);
    expect(fills).toEqual(['fill="#2e7d32"', 'fill="#c62828"', 'fill="#9e9e9e"']);
    expect(crypto).toContain('54.9/s (goal &gt;= 200/s)');
  });
});

describe('docs/benchmarks.md', () => {
  let out: string;
  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'bench-page-committed-'));
    await run(process.execPath, ['--import', 'tsx', 'bench/page.ts', '--out', out], { cwd: root, encoding: 'utf8' });
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('is the page of the results in bench/results, charts included (npm run bench:page after a run)', () => {
    expect(readFileSync(join(root, 'docs', 'benchmarks.md'), 'utf8')).toBe(readFileSync(join(out, 'benchmarks.md'), 'utf8'));
    const sections = readdirSync(join(root, 'bench', 'results')).sort();
    expect(sections.length).toBeGreaterThan(0);
    expect(readdirSync(join(root, 'docs', 'benchmarks')).sort()).toEqual(sections.map((s) => `${s}.svg`));
    for (const s of sections) expect(readFileSync(join(root, 'docs', 'benchmarks', `${s}.svg`), 'utf8')).toBe(readFileSync(join(out, 'benchmarks', `${s}.svg`), 'utf8'));
  });
});
