/**
 * The short fault scenarios that stop the servers themselves (`npm run faults -- --short
 * temporal-outage database-kill` at the same sizes): each runs on a FerretDB and a Temporal dev
 * server of its own (faults/servers.ts; FerretDB on the PostgreSQL `npm test` started, or on
 * SQLite with EMBEDDED_DB=sqlite), since stopping the ones the other test files share would fail
 * them. The API and the worker run as processes, as `npm start` runs them.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ScenarioContext, ScenarioResult } from '../../faults/scenario';
import { failures, summaryLine } from '../../faults/scenario';
import { servers } from '../../faults/servers';
import { temporalOutage } from '../../faults/scenarios/temporalOutage';
import { databaseKill } from '../../faults/scenarios/databaseKill';

type Servers = Awaited<ReturnType<typeof servers>>;

/** A FerretDB and a Temporal dev server for one scenario, stopped after it. */
async function withOwnServers(name: string, run: (ctx: ScenarioContext, s: Servers) => Promise<ScenarioResult>): Promise<ScenarioResult> {
  const runDir = mkdtempSync(join(process.env.TEST_RUN_DIR ?? tmpdir(), `faults-${name}-`));
  const s = await servers(runDir);
  try {
    return await run({ mongoServerUrl: s.mongoServerUrl, temporalAddress: s.temporalAddress, runDir, progress: () => undefined }, s);
  } finally {
    await s.stop();
  }
}

function expectNothingLostOrDoubled(r: ScenarioResult) {
  // The summary line and the details say what went wrong.
  expect([summaryLine(r), ...r.details].join('\n')).toContain(' 0 lost, 0 doubled,');
  expect(failures(r)).toEqual([]);
  expect(r.operations).toBeGreaterThan(0);
}

describe('faults that stop the servers (short), on servers of their own', () => {
  it('Temporal stopped while writes are made: each answered 2xx, and each has its event, its workflow and (a transaction) its allocation afterwards', async () => {
    const r = await withOwnServers('temporal-outage', (ctx, s) => temporalOutage(ctx, s.temporal, { writes: 20, outageMs: 10_000 }));
    expectNothingLostOrDoubled(r);
    expect(r.operations).toBeGreaterThanOrEqual(20);
  }, 600_000);

  it('kill -9 of FerretDB during creates: prompt 503s during the outage, each write applied once after retries with its key, none acknowledged lost', async () => {
    const r = await withOwnServers('database-kill', (ctx, s) => databaseKill(ctx, s.ferretdb, { writes: 20 }));
    expectNothingLostOrDoubled(r);
    expect(r.operations).toBe(20);
  }, 600_000);
});
