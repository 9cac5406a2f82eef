/**
 * `npm run faults [--short] [scenario ...]`: the fault suite against the real stack. The
 * script (scripts/faults.sh) starts PostgreSQL; this process runs FerretDB and the Temporal dev
 * server itself (scenarios stop and kill them), and every scenario runs its own API and worker
 * as `npm start` does. Prints one `fault <name>: ...` line per scenario; exits 1 when anything
 * was lost or doubled, a fault hit no work in progress, or a scenario failed.
 *
 * An argument names a scenario or a prefix of names up to a dash: `cluster` runs every cluster-*
 * scenario, `cluster-worker-kill` both of its parts. The cluster-* scenarios run on the real
 * Temporal server (faults/cluster.ts: four services, mutual TLS) with two API processes (the
 * client alternates between them) and two workers; the dev server is started only for the others.
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
import { temporalCluster, TemporalCluster } from './cluster';
import { apiKillDuringCreates } from './scenarios/apiKill';

type Scenario = (ctx: ScenarioContext, s: Servers) => Promise<ScenarioResult>;
type Servers = { ferretdb: ManagedProcess; temporal: ManagedProcess; cluster: () => TemporalCluster };

/** Processes of each cluster-* scenario. */
const CLUSTER_APIS = 2;
const CLUSTER_WORKERS = 2;

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
    // On the real Temporal server, 2 APIs and 2 workers (the context says so, see main).
    'cluster-worker-kill-renewals': (ctx) => renewalsUnderWorkerKill(ctx, { subscriptions: short ? 30 : 300, restart: false }),
    'cluster-worker-kill-webhooks': (ctx) => webhooksUnderWorkerKill(ctx, { events: short ? 30 : 500, restart: false }),
    'cluster-api-kill': (ctx) => apiKillDuringCreates(ctx, { creates: short ? 30 : 150 }),
    'cluster-history-kill': (ctx, s) =>
      temporalOutage(ctx, s.cluster().services.history, { writes: short ? 20 : 60, outageMs: 10_000, signal: 'SIGKILL', name: 'history-killed-during-writes', fixedOutage: true }),
  };
}

/** `wanted` is a scenario's name or a prefix of names up to a dash (`cluster`, `cluster-worker-kill`). */
const selects = (wanted: string, name: string) => name === wanted || name.startsWith(`${wanted}-`);

async function main() {
  const args = process.argv.slice(2);
  const short = args.includes('--short');
  const all = scenarios(short);
  const wanted = args.filter((a) => !a.startsWith('--'));
  for (const w of wanted) if (!Object.keys(all).some((n) => selects(w, n))) throw new Error(`unknown scenario ${w}; one of ${Object.keys(all).join(', ')} (or a prefix: cluster)`);
  const chosen = Object.keys(all).filter((n) => !wanted.length || wanted.some((w) => selects(w, n)));
  const runDir = process.env.FAULTS_RUN_DIR ?? join(ROOT, '.data', 'faults');
  mkdirSync(runDir, { recursive: true });

  // The dev server only when a scenario other than the cluster ones runs.
  const base = await servers(runDir, { startTemporal: chosen.some((n) => !n.startsWith('cluster-')) });
  let cluster: TemporalCluster | null = null;
  const s: Servers = { ...base, cluster: () => (cluster ??= temporalCluster(runDir)) };
  const ctx: ScenarioContext = {
    mongoServerUrl: base.mongoServerUrl,
    temporalAddress: base.temporalAddress,
    runDir,
    progress: (line) => process.stderr.write(`[faults] ${line}\n`),
  };
  const lines: string[] = [];
  let failed = 0;
  try {
    for (const name of chosen) {
      const run = all[name];
      ctx.progress(`--- ${name}`);
      const onCluster = name.startsWith('cluster-');
      // A scenario that stopped a server leaves it running again; make sure before the next one.
      if (!onCluster && !s.temporal.running) await s.temporal.start();
      if (!s.ferretdb.running) await s.ferretdb.start();
      try {
        let scenarioCtx = ctx;
        if (onCluster) {
          const c = s.cluster();
          // Every service running (a scenario that killed one started it again) and the namespace there.
          await c.start();
          scenarioCtx = { ...ctx, temporalAddress: c.address, temporalEnv: c.env, apis: CLUSTER_APIS, workers: CLUSTER_WORKERS };
        }
        const r = await run(scenarioCtx, s);
        if (onCluster) r.name = `cluster-${r.name}`;
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
    await (cluster as TemporalCluster | null)?.stop();
    await base.stop();
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

