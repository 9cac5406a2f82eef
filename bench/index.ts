/**
 * `npm run bench [section ...] [--json]`: every section (or those named), printed as ratios against
 * baselines measured in the same run. `--json` also writes each section's result to
 * bench/results/<section>/<time>.json (bench/results.ts), which `npm run bench:page` draws.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectDatabase, disconnectDatabase } from '../src/db/connection';
import { runApiBench } from './api';
import { runWebhookBench } from './webhooks';
import { runRenewalBench } from './renewals';
import { runCryptoBench } from './crypto';
import { runPaymentHistoryBench } from './paymentHistory';
import { runDetectionBench } from './detection';
import { runScaleBench } from './scale';
import { runReportsBench } from './reports';
import { runIdleBench } from './idle';
import { resultFileName, RunContext, sectionResult } from './results';

const RESULTS_DIR = path.join(__dirname, 'results');

/** BENCH_* variables that wire the run up rather than size or tune a section: not recorded. */
const WIRING = new Set(['BENCH_STACK_PID', 'BENCH_WORKER_PID', 'BENCH_RUN_DIR', 'BENCH_TEMPORAL_LABEL', 'BENCH_WORKERS', 'BENCH_NODE_ARGS', 'BENCH_API_NODE_ARGS', 'BENCH_WORKER_NODE_ARGS']);

function git(...args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: __dirname, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function runContext(date: Date): RunContext {
  const cpus = os.cpus();
  return {
    date,
    commit: git('rev-parse', 'HEAD'),
    dirty: (git('status', '--porcelain', '--untracked-files=no') ?? '') !== '',
    machine: { cpu: cpus[0]?.model.trim() ?? 'unknown', cores: cpus.length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), os: `${os.type()} ${os.release()}`, node: process.version },
    stack: { temporal: process.env.BENCH_TEMPORAL_LABEL ?? 'Temporal dev server', workers: Number(process.env.BENCH_WORKERS ?? 1), database: `FerretDB on ${process.env.EMBEDDED_DB ?? 'postgresql'}` },
    settings: Object.fromEntries(Object.entries(process.env).filter(([k, v]) => k.startsWith('BENCH_') && !WIRING.has(k) && v !== undefined).sort() as [string, string][]),
  };
}

async function main() {
  const apiUrl = `http://127.0.0.1:${process.env.PORT}`;
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const only = args.filter((a) => a !== '--json');
  // In this order; scale last: its 8,000+ customers would change what the other sections measure.
  const sections: [string, () => Promise<string[]>][] = [
    ['idle', () => runIdleBench()],
    ['api', () => runApiBench(apiUrl)],
    ['renewals', () => runRenewalBench(apiUrl)],
    ['crypto', () => runCryptoBench(apiUrl)],
    ['payment-history', () => runPaymentHistoryBench(apiUrl)],
    ['detection', () => runDetectionBench(apiUrl)],
    ['webhooks', () => runWebhookBench({ temporalAddress: process.env.TEMPORAL_ADDRESS!, mongoUri: process.env.MONGODB_URI! })],
    ['reports', () => runReportsBench(apiUrl)],
    ['scale', () => runScaleBench(apiUrl)],
  ];
  const names = sections.map(([name]) => name);
  for (const o of only) if (!names.includes(o)) throw new Error(`unknown bench section ${o}; one of ${names.join(', ')} (and --json)`);
  const run = runContext(new Date());
  // The workers this process runs (webhooks, the floors) log the SDK's warnings only, not every state change.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  await connectDatabase(process.env.MONGODB_URI!);
  console.log(`bench on the ${run.stack.temporal}, ${run.stack.workers} worker process(es)`);
  try {
    for (const [name, section] of sections) {
      if (only.length && !only.includes(name)) continue;
      const started = performance.now();
      const lines = await section();
      console.log(lines.join('\n'));
      if (!json) continue;
      const result = sectionResult(name, lines, (performance.now() - started) / 1000, run);
      const file = path.join(RESULTS_DIR, name, resultFileName(run.date));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
      console.log(`result written to ${path.relative(process.cwd(), file)}`);
    }
  } finally {
    await disconnectDatabase();
  }
}

main()
  .then(() => process.exit(0))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
