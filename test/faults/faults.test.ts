/**
 * The short fault scenarios (`npm run faults -- --short renewals webhooks allocations drain` at
 * the same sizes): the API and the worker run as processes, exactly as `npm start` runs them,
 * against the database and Temporal dev server `npm test` started; the scenario kills them.
 * (temporal-outage and database-kill, which stop those servers, are in outages.test.ts.)
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ScenarioContext, ScenarioResult } from '../../faults/scenario';
import { failures, summaryLine } from '../../faults/scenario';
import { renewalsUnderWorkerKill } from '../../faults/scenarios/renewals';
import { webhooksUnderWorkerKill } from '../../faults/scenarios/webhooks';
import { allocationsUnderKills } from '../../faults/scenarios/allocations';
import { apiRestartWithRequestsInFlight } from '../../faults/scenarios/drain';

const ctx: ScenarioContext = {
  mongoServerUrl: process.env.TEST_MONGODB_URL!,
  temporalAddress: process.env.TEST_TEMPORAL_ADDRESS!,
  runDir: mkdtempSync(join(process.env.TEST_RUN_DIR ?? tmpdir(), 'faults-')),
  progress: () => undefined,
};

function expectNothingLostOrDoubled(r: ScenarioResult) {
  // The summary line and the details say what went wrong.
  expect([summaryLine(r), ...r.details].join('\n')).toContain(' 0 lost, 0 doubled,');
  expect(r.lost).toBe(0);
  expect(r.doubled).toBe(0);
  expect(r.operations).toBeGreaterThan(0);
  expect(failures(r)).toEqual([]);
}

/** The fault hit work in progress, else the scenario proved nothing (the details say what it met). */
function expectFaultHitWorkInProgress(r: ScenarioResult) {
  expect(r.inProgressAtFault ? 'hit work in progress' : [summaryLine(r), ...r.details].join('\n')).toBe('hit work in progress');
}

describe('faults (short)', () => {
  it('kill -9 of the worker while subscriptions renew at one instant: every period invoiced exactly once', async () => {
    const r = await renewalsUnderWorkerKill(ctx, { subscriptions: 30 });
    expectNothingLostOrDoubled(r);
    expectFaultHitWorkInProgress(r);
    expect(r.operations).toBe(30);
  }, 600_000);

  it('kill -9 of the worker during a burst of events: every (event, endpoint) delivered, attempt logs without gaps or repeats', async () => {
    const r = await webhooksUnderWorkerKill(ctx, { events: 30 });
    expectNothingLostOrDoubled(r);
    expect(r.operations).toBe(30 * 5);
  }, 600_000);

  it('kill -9 of the worker, then the API, during manual transactions: none allocated twice, none overpaid, all allocated or credit', async () => {
    const r = await allocationsUnderKills(ctx, { transactions: 45, customers: 10 });
    expectNothingLostOrDoubled(r);
    expectFaultHitWorkInProgress(r);
    expect(r.operations).toBe(45);
  }, 600_000);

  it('SIGTERM to the API with requests in flight: they finish, then new connections are refused', async () => {
    const r = await apiRestartWithRequestsInFlight(ctx, { requests: 20 });
    expectNothingLostOrDoubled(r);
    expectFaultHitWorkInProgress(r);
  }, 300_000);
});
