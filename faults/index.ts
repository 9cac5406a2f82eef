/**
 * `npm run faults [--short] [scenario ...]`: the fault suite against the real stack. The
 * script (scripts/faults.sh) starts PostgreSQL; this process runs FerretDB and the Temporal dev
 * server itself (scenarios stop and kill them), and every scenario runs its own API and worker
 * as `npm start` does. Prints one `fault <name>: ...` line per scenario; exits 1 when anything
 * was lost or doubled, a fault hit no work in progress, or a scenario failed.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess, ROOT } from './stack';
import type { ScenarioContext, ScenarioResult } from './scenario';
import { failures, summaryLine } from './scenario';
import { renewalsUnderWorkerKill } from './scenarios/renewals';
import { webhooksUnderWorkerKill } from './scenarios/webhooks';
import { allocationsUnderKills } from './scenarios/allocations';
import { apiRestartWithRequestsInFlight } from './scenarios/drain';
import { crashedProcessIsRestarted } from './scenarios/supervision';
import { temporalOutage } from './scenarios/temporalOutage';
import { databaseKill } from './scenarios/databaseKill';
import { servers } from './servers';

type Scenario = (ctx: ScenarioContext, s: Servers) => Promise<ScenarioResult>;
type Servers = { ferretdb: ManagedProcess; temporal: ManagedProcess };

/** Full sizes are the issue's; --short is what `npm test` runs. */
function scenarios(short: boolean): Record<string, Scenario> {
  return {
    renewals: (ctx) => renewalsUnderWorkerKill(ctx, { subscriptions: short ? 30 : 300 }),
    webhooks: (ctx) => webhooksUnderWorkerKill(ctx, { events: short ? 30 : 500 }),
    allocations: (ctx) => allocationsUnderKills(ctx, { transactions: short ? 45 : 300, customers: short ? 10 : 50 }),
    'temporal-outage': (ctx, s) => temporalOutage(ctx, s.temporal, { writes: short ? 20 : 90, outageMs: short ? 10_000 : 30_000 }),
    'database-kill': (ctx, s) => databaseKill(ctx, s.ferretdb, { writes: short ? 20 : 100 }),
    drain: (ctx) => apiRestartWithRequestsInFlight(ctx, { requests: short ? 20 : 60 }),
    supervision: (ctx) => crashedProcessIsRestarted(ctx),
  };
}

async function main() {
  const args = process.argv.slice(2);
  const short = args.includes('--short');
  const all = scenarios(short);
  const wanted = args.filter((a) => !a.startsWith('--'));
  for (const w of wanted) if (!all[w]) throw new Error(`unknown scenario ${w}; one of ${Object.keys(all).join(', ')}`);
  const runDir = process.env.FAULTS_RUN_DIR ?? join(ROOT, '.data', 'faults');
  mkdirSync(runDir, { recursive: true });

  const s = await servers(runDir);
  const ctx: ScenarioContext = {
    mongoServerUrl: s.mongoServerUrl,
    temporalAddress: s.temporalAddress,
    runDir,
    progress: (line) => process.stderr.write(`[faults] ${line}\n`),
  };
  const lines: string[] = [];
  let failed = 0;
  try {
    for (const [name, run] of Object.entries(all)) {
      if (wanted.length && !wanted.includes(name)) continue;
      ctx.progress(`--- ${name}`);
      // A scenario that stopped a server leaves it running again; make sure before the next one.
      if (!s.temporal.running) await s.temporal.start();
      if (!s.ferretdb.running) await s.ferretdb.start();
      try {
        const r = await run(ctx, s);
        const line = summaryLine(r);
        lines.push(line, ...r.details.map((d) => `  ${d}`));
        console.log([line, ...r.details.map((d) => `  ${d}`)].join('\n'));
        if (failures(r).length) failed += 1;
        // Its own fault line, so that the closing list shows it too.
        if (r.inProgressAtFault === 0) {
          lines.push(`fault ${name}: FAILED (the fault hit no work in progress)`);
          console.log(lines[lines.length - 1]);
        }
      } catch (err) {
        failed += 1;
        const line = `fault ${name}: FAILED (${(err as Error).message.split('\n')[0]})`;
        lines.push(line);
        console.log(line);
        ctx.progress(String((err as Error).stack));
      }
    }
  } finally {
    await s.stop();
  }
  console.log(`\n${lines.filter((l) => l.startsWith('fault ')).join('\n')}`);
  return failed;
}

main()
  .then((failed) => process.exit(failed ? 1 : 0))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });

