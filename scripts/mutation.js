#!/usr/bin/env node
/**
 * `npm run mutation`: StrykerJS (stryker.config.json) over the pure domain with its unit tests
 * only (jest.mutation.config.js), then the score per folder and, last, `mutation score: <n>%`.
 * Incremental: a rerun only tests the mutants whose code or tests changed (pass --force for a
 * full run). The HTML report is reports/mutation/mutation.html (git-ignored).
 * Exits non-zero when Stryker fails or a folder scores below TARGET.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const REPORT = path.join(ROOT, 'reports/mutation/mutation.json');
const TARGET = 85;
// Mutants Stryker could test; `Ignored`, `CompileError` and `RuntimeError` do not count (as in Stryker's own score).
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** Per folder and in total: detected and undetected mutants, and the score in percent. */
function scores(report) {
  const folders = new Map();
  const total = { detected: 0, undetected: 0 };
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const folder = path.posix.dirname(file.split(path.sep).join('/'));
    const f = folders.get(folder) ?? { detected: 0, undetected: 0, survivors: [] };
    folders.set(folder, f);
    for (const m of mutants) {
      if (DETECTED.has(m.status)) { f.detected++; total.detected++; }
      if (UNDETECTED.has(m.status)) {
        f.undetected++; total.undetected++;
        f.survivors.push(`${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} (${m.status})`);
      }
    }
  }
  return { folders, total };
}

const pct = ({ detected, undetected }) => (detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected));

function main() {
  const args = process.argv.slice(2);
  // Niceness 10, inherited by Stryker and its Jest workers: the run yields to other work on the machine.
  try { os.setPriority(Math.max(os.getPriority(), 10)); } catch { /* not permitted: run at the current priority */ }
  const run = spawnSync(process.execPath, [path.join(path.dirname(require.resolve('@stryker-mutator/core/package.json')), 'bin/stryker.js'), 'run', ...args], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) {
    console.error(`stryker failed (exit ${run.status ?? run.signal})`);
    process.exit(run.status || 1);
  }
  const { folders, total } = scores(JSON.parse(fs.readFileSync(REPORT, 'utf8')));
  const below = [];
  console.log('\nmutation score per folder (killed or timed out / all covered and uncovered mutants):');
  for (const [folder, f] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
    const score = pct(f);
    if (score < TARGET) below.push(folder);
    console.log(`  ${folder.padEnd(24)} ${score.toFixed(1).padStart(5)}%  (${f.detected}/${f.detected + f.undetected})`);
  }
  if (process.env.MUTATION_LIST_SURVIVORS) for (const f of folders.values()) for (const s of f.survivors) console.log(`  survived: ${s}`);
  if (below.length > 0) console.log(`below the ${TARGET}% target: ${below.join(', ')}`);
  console.log(`mutation score: ${pct(total).toFixed(1)}%`);
  if (below.length > 0) process.exitCode = 1;
}

main();
