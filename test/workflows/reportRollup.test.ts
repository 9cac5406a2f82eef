/**
 * Report rollups through the real app and worker: writes signal the account's rollup workflow,
 * which rebuilds the rollups; the reports read them once current and compute live before that,
 * so the answer never changes, only where it comes from. The history replays.
 */
import { isDeepStrictEqual } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { useTestDatabase } from '../support/db';
import { useTimeSkippingApi } from '../support/temporal';
import { newAccount } from '../support/api';
import { sleep, waitFor } from '../support/wait';
import { createTestWorker, fixtureHistory, recordHistory, replay } from '../support/workflows';
import { testDependencies } from '../support/dependencies';
import { workflowIds } from '../../src/temporal/workflowIds';
import { ROLLUP_IDLE_MS } from '../../src/temporal/reportDefinitions';
import { ReportRollup, ReportRollupMark, ReportRollupMarkDoc, ReportRollupState, ReportRollupStateDoc } from '../../src/models/reportRollup';
import { Invoice } from '../../src/models/invoice';
import { newId, ID_PREFIX } from '../../src/lib/ids';
import { readCollectionsRollup, readMrrRollup, readReceivablesRollup, rebuildRollup, rollupStateId, rollupsChanged } from '../../src/services/reports/reportRollups';
import { receivables, receivablesTotals } from '../../src/services/reports/reports';
import { loadCollectionsSource, loadMrrSubscriptions, loadOpenInvoices } from '../../src/services/reports/reportSources';
import { ageInvoices } from '../../src/billing/receivables';
import { collectionsReport } from '../../src/billing/collections';
import { mrrReport, monthsBetween, addMonths, monthOf } from '../../src/billing/mrr';
import { BTC_BECH32, customerWithWallet, invoiceOf, txHash } from '../crypto/helpers';

useTestDatabase();
const taskQueue = 'report-rollup-test';
const stack = useTimeSkippingApi(taskQueue);

const DAY = 86_400_000;
const thisMonth = monthOf(new Date());
const from = addMonths(thisMonth, -11);

async function seed() {
  const a = await newAccount(stack.api.url);
  const scope = { accountId: a.account_id as string, sandbox: null };
  const product = (await a.api.post('/v1/products', { name: 'Plan' })).body;
  const monthly = (await a.api.post('/v1/prices', { product_id: product.id, amount: 2000, recurring: { interval: 'month', interval_count: 1 } })).body;
  const { customer, wallet } = await customerWithWallet(a.api);
  const start = new Date(Date.now() - 70 * DAY).toISOString();
  for (const q of [1, 2]) expect((await a.api.post('/v1/subscriptions', { customer_id: customer.id, proration_behavior: 'none', phases: [{ start_date: start, items: [{ price_id: monthly.id, quantity: q }] }] })).status).toBe(201);
  const btc = (await a.api.post('/v1/crypto_addresses', { wallet_id: wallet.id, currency_code: 'BTC', address: BTC_BECH32 })).body;
  const handle = () => stack.env.client.workflow.getHandle(workflowIds.reportRollup(scope.accountId, null));
  return { a, scope, customer, btc, handle };
}

const state = (scope: { accountId: string; sandbox: null }, kind: 'mrr' | 'collections') => ReportRollupState.findById(rollupStateId(scope, kind)).lean<ReportRollupStateDoc>();

/**
 * Lets the test server's clock run a second at a time until `check` holds. Never a workflow's
 * result: while a client awaits one the server skips to the next timer of any workflow, and on a
 * loaded machine the seeded subscriptions' renewals a month away fired, each one marking the
 * rollups and starting more work, until the test ran out of time (CI, 2026-11-29).
 */
const until = <T>(what: string, check: () => Promise<T | null | undefined | false>) => waitFor(check, what, 60_000, () => stack.env.sleep(1_000));

/** Until these rollups are current (rebuilt after the debounce, a couple of the server's seconds). */
function rollupsCurrent(scope: { accountId: string; sandbox: null }, kinds: ('mrr' | 'collections' | 'receivables')[]) {
  return until(`rollups ${kinds.join(', ')} current`, async () =>
    (!kinds.includes('mrr') || (await readMrrRollup(scope))) &&
    (!kinds.includes('collections') || (await readCollectionsRollup(scope))) &&
    (!kinds.includes('receivables') || (await readReceivablesRollup(scope))),
  );
}

/** Past the workflow's idle time (no timer of any other workflow is that close), until it has completed. */
async function idleUntilCompleted(handle: () => WorkflowHandle) {
  await stack.env.sleep(ROLLUP_IDLE_MS);
  await until('the rollup workflow completed', async () => (await handle().describe()).status.name === 'COMPLETED');
}

describe('report rollup workflow', () => {
  it('rebuilds after writes; a report after a payment shows it live at once, then from the rollup; the history replays', async () => {
    const worker = await createTestWorker(stack.env, taskQueue);
    await worker.runUntil(async () => {
      const { a, scope, customer, btc, handle } = await seed();
      // Subscriptions were created: MRR rebuilt. No payment yet: collections never marked, so live.
      await rollupsCurrent(scope, ['mrr']);
      expect(await readCollectionsRollup(scope)).toBeNull();
      const mrrBefore = (await a.api.get('/v1/reports/mrr')).body;
      const live = mrrReport(await loadMrrSubscriptions(scope), from, thisMonth);
      expect(mrrFromApi(mrrBefore)).toEqual(live.map((m) => m.mrrCents));
      expect(mrrBefore.months[11]).toMatchObject({ mrr: '60.00', active_subscriptions: 2 });
      const before = (await a.api.get('/v1/reports/collections')).body;

      // A payment: the rollup is stale at once, so the report computes live and shows it.
      await invoiceOf(a.api, customer.id, '100.00', '2030-01-01');
      const tx = await a.api.post('/v1/crypto_transactions', { to_address_id: btc.id, amount: '0.002', currency_code: 'BTC', transaction_id: txHash() });
      expect(tx.status).toBe(201);
      expect(await readCollectionsRollup(scope)).toBeNull();
      await rollupsCurrent(scope, ['mrr', 'collections', 'receivables']);
      const after = (await a.api.get('/v1/reports/collections')).body;
      expect(after.months[11].payments).toBe(before.months[11].payments + 1);
      // ...and once rebuilt the rollup gives exactly the live answer.
      const src = await loadCollectionsSource(scope);
      const liveCollections = collectionsReport(src.transactions, src.markedPaid, monthsBetween(from, thisMonth));
      expect(after.months).toEqual(liveCollections.months);
      expect(after.unallocated_credit).toEqual(liveCollections.unallocated_credit);
      const s = await state(scope, 'collections');
      expect(s!.built_gen).toBe((await ReportRollupMark.findById(rollupStateId(scope, 'collections')).lean<ReportRollupMarkDoc>())!.dirty_gen);
      // The overview's receivables totals from the rollup: the invoice is open (paid in part or not at all).
      // The payment's allocation (its own workflow) marks both again: rebuilt once more, still the live answer.
      // Its local activity recorded: the allocation written and the rollups marked after it.
      const allocation = stack.env.client.workflow.getHandle(workflowIds.allocation(customer.id));
      await until('the allocation recorded', async () => (await allocation.fetchHistory()).events!.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity'));
      expect((await a.api.get(`/v1/crypto_transactions/${tx.body.id}`)).body.allocations.length).toBeGreaterThan(0);
      await rollupsCurrent(scope, ['mrr', 'collections', 'receivables']);
      const src2 = await loadCollectionsSource(scope);
      expect((await a.api.get('/v1/reports/collections')).body.months).toEqual(collectionsReport(src2.transactions, src2.markedPaid, monthsBetween(from, thisMonth)).months);
      expect(await readCollectionsRollup(scope)).not.toBeNull();

      // Receivables: the report and the overview's totals from the rollup equal the live aging,
      // compared while it stays current across the live read (an invoice's due date may mark it).
      const today = new Date().toISOString().slice(0, 10);
      for (let tries = 0; ; tries++) {
        await rollupsCurrent(scope, ['receivables']);
        const fromRollup = await receivables(scope, {});
        const totals = await receivablesTotals(scope);
        const live = ageInvoices((await loadOpenInvoices(scope)).map(({ created_at: _, ...i }) => i), today);
        // A write between the two reads (its mark follows it): read again.
        const settled = (await readReceivablesRollup(scope)) !== null && isDeepStrictEqual(fromRollup.aging, live);
        if (!settled && tries < 15) {
          await sleep(500);
          continue;
        }
        expect(fromRollup.aging).toEqual(live);
        expect(live.total.count).toBeGreaterThan(0);
        expect(totals).toEqual({ buckets: live.buckets.map(({ invoices: _, ...b }) => b), total: live.total, overdue: live.overdue });
        break;
      }

      await idleUntilCompleted(handle);
      await replay(recordHistory('reportRollup-rebuilds-current', await handle().fetchHistory()), 'replay-report-rollup');
      // Kept (read-only) from before a rebuild ending dirty was rebuilt again: such runs must still replay.
      await replay(fixtureHistory('reportRollup-rebuilds'), 'replay-report-rollup-kept');
    });
  });
});

describe('report rollups without a worker', () => {
  it('a rebuild is idempotent, replaces its build, and a rollup marked stale is not read', async () => {
    const { scope } = await seed();
    expect(await rebuildRollup(scope, 'mrr')).toMatchObject({ swapped: true, current: true });
    const first = await readMrrRollup(scope);
    expect(first).not.toBeNull();
    const firstBuild = (await state(scope, 'mrr'))!.build;
    const outcome = await rebuildRollup(scope, 'mrr');
    expect(outcome).toMatchObject({ swapped: true, current: true });
    expect(await readMrrRollup(scope)).toEqual(first);
    const s = (await state(scope, 'mrr'))!;
    expect(s.build).not.toBe(firstBuild);
    expect(await ReportRollup.countDocuments({ build: firstBuild })).toBe(0);
    expect(await ReportRollup.countDocuments({ build: s.build })).toBe(s.parts);

    // Marked stale (a write): read as missing until rebuilt, then the same again.
    // Without a workflow client (inline: nothing signalled), so only the rebuild below builds it.
    await rollupsChanged(testDependencies(), scope, 'mrr');
    expect(await readMrrRollup(scope)).toBeNull();
    expect(await rebuildRollup(scope, 'mrr')).toMatchObject({ swapped: true, current: true });
    expect(await readMrrRollup(scope)).toEqual(first);
  });

  it('a write marked while a rebuild runs is never lost: a rollup read as current has every open invoice', async () => {
    // The mark has its own document: on the state, a rebuild's write landing just after a mark
    // wrote back the mark it had read (FerretDB writes the whole document), and the rollup looked
    // current without the write.
    const a = await newAccount(stack.api.url);
    const scope = { accountId: a.account_id as string, sandbox: null };
    const deps = testDependencies();
    let written = 0;
    for (let i = 0; i < 25; i++) {
      await Promise.all([
        rebuildRollup(scope, 'receivables'),
        (async () => {
          await new Promise((r) => setTimeout(r, i % 5));
          const now = new Date();
          await Invoice.collection.insertOne({
            _id: newId(ID_PREFIX.invoice), account_id: scope.accountId, sandbox: null, customer_id: 'cust_race', status: 'pending',
            due_date: '2030-01-01', total_amount: '10.00', amount_paid: '0.00', created_at: now, updated_at: now,
          } as never);
          written += 1;
          await rollupsChanged(deps, scope, 'receivables');
        })(),
      ]);
      const rollup = await readReceivablesRollup(scope);
      if (rollup) expect(rollup.invoices).toHaveLength(written);
    }
    // Rebuilt after the last write: current, with all of them.
    expect(await rebuildRollup(scope, 'receivables')).toMatchObject({ current: true });
    expect((await readReceivablesRollup(scope))!.invoices).toHaveLength(written);
  });

  it('a write signals the workflow only when a rebuild started since the last write (or the rollup has been dirty for a minute)', async () => {
    // A scope no write of the stack touches: its worker's own rebuild would start between the steps.
    const scope = { accountId: newId(ID_PREFIX.account), sandbox: null };
    const signalled: string[] = [];
    const deps = testDependencies({ workflowOverrides: { reportRollup: { stale: async (_scope, kinds) => void signalled.push(...kinds) } } });
    expect(await rebuildRollup(scope, 'mrr')).toMatchObject({ current: true });
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr']);
    const markOf = async () => (await ReportRollupMark.findById(rollupStateId(scope, 'mrr')).lean<ReportRollupMarkDoc>())!;
    const dirty = await markOf();
    // Dirty now: the signal above brings the rebuild, which reads the source after these writes;
    // they need no signal, and write nothing (the mark keeps the first one's generation).
    await rollupsChanged(deps, scope, 'mrr');
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr']);
    expect(await markOf()).toEqual(dirty);
    expect(await readMrrRollup(scope)).toBeNull();
    expect(await rebuildRollup(scope, 'mrr')).toMatchObject({ current: true });
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr', 'mrr']);
    // Dirty for a minute with no rebuild started: the write that made it dirty may have died before its signal.
    await ReportRollupMark.updateOne({ _id: rollupStateId(scope, 'mrr') }, { $set: { dirty_since: new Date(Date.now() - 61_000) } });
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr', 'mrr', 'mrr']);
    // The next write keeps the first one's time (so the rollup stays overdue until a rebuild starts).
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr', 'mrr', 'mrr', 'mrr']);
    // A rebuild that starts clears it; the write after that rebuild signals once, as it may have ended current.
    expect(await rebuildRollup(scope, 'mrr')).toMatchObject({ current: true });
    await rollupsChanged(deps, scope, 'mrr');
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toHaveLength(5);
  });

  it('a rollup never built is signalled by its first write only (or again once it has been dirty for a minute); an earlier version\'s mark is signalled', async () => {
    // A scope no write of the stack touches (its worker would build the rollup of a seeded one).
    const scope = { accountId: newId(ID_PREFIX.account), sandbox: null };
    const signalled: string[] = [];
    const deps = testDependencies({ workflowOverrides: { reportRollup: { stale: async (_scope, kinds) => void signalled.push(...kinds) } } });
    const markId = rollupStateId(scope, 'mrr');
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr']);
    // Its first build is on its way: writes before it need no signal of their own.
    await rollupsChanged(deps, scope, 'mrr');
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr']);
    // Dirty for a minute and still no build: its signal may have died with its process.
    await ReportRollupMark.updateOne({ _id: markId }, { $set: { dirty_since: new Date(Date.now() - 61_000) } });
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toEqual(['mrr', 'mrr']);

    // A mark an earlier version wrote (no prefix, no time): signalled once, as after a rebuild; the next write finds this one's.
    await ReportRollupMark.collection.replaceOne({ _id: markId } as never, { dirty_gen: 'earlier' });
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toHaveLength(3);
    await rollupsChanged(deps, scope, 'mrr');
    expect(signalled).toHaveLength(3);
  });

  it('a rebuild that ends dirty is rebuilt without another signal', async () => {
    // An account no write signalled: this test's signal is the only one.
    const a = await newAccount(stack.api.url);
    const scope = { accountId: a.account_id as string, sandbox: null };
    const handle = () => stack.env.client.workflow.getHandle(workflowIds.reportRollup(scope.accountId, null));
    const rebuilds: boolean[] = [];
    const worker = await createTestWorker(stack.env, taskQueue, {}, {
      // The first rebuild of each run sees a write marked while it ran (marked without a signal).
      rebuildReportRollup: async (input: { accountId: string; sandbox: string | null; kind: 'mrr' }) => {
        // Other tests' accounts may still have rollup workflows on this queue: rebuilt as usual.
        if (input.accountId !== scope.accountId) return rebuildRollup({ accountId: input.accountId, sandbox: input.sandbox }, input.kind);
        if (rebuilds.length === 0) await ReportRollupMark.updateOne({ _id: rollupStateId(scope, input.kind) }, { $set: { dirty_gen: 'written-meanwhile' } }, { upsert: true });
        const outcome = await rebuildRollup(scope, input.kind);
        if (rebuilds.length === 0) await ReportRollupMark.updateOne({ _id: rollupStateId(scope, input.kind) }, { $set: { dirty_gen: 'written-during-the-rebuild' } });
        const current = rebuilds.length === 0 ? false : outcome.current;
        rebuilds.push(current);
        return { ...outcome, current };
      },
    });
    await worker.runUntil(async () => {
      await stack.env.client.workflow.signalWithStart('reportRollupWorkflow', {
        workflowId: workflowIds.reportRollup(scope.accountId, null),
        taskQueue,
        args: [{ accountId: scope.accountId, sandbox: null, pending: [] }],
        signal: 'rollupStale',
        signalArgs: ['mrr'],
      });
      await until('the rebuild after the dirty one', async () => rebuilds.length >= 2);
      await idleUntilCompleted(handle);
    });
    expect(rebuilds).toEqual([false, true]);
    expect(await readMrrRollup(scope)).not.toBeNull();
  });

  it('a first rebuild of a scope no write ever marked is current (documents written straight, as the bench does)', async () => {
    const a = await newAccount(stack.api.url);
    const scope = { accountId: a.account_id as string, sandbox: null };
    expect(await readMrrRollup(scope)).toBeNull();
    expect(await rebuildRollup(scope, 'mrr')).toMatchObject({ swapped: true, current: true, parts: 0 });
    expect(await rebuildRollup(scope, 'collections')).toMatchObject({ swapped: true, current: true, parts: 1 });
    expect(await readMrrRollup(scope)).toEqual([]);
    expect(await readCollectionsRollup(scope)).toEqual({ months: [], unallocated_credit: [] });
    expect((await a.api.get('/v1/reports/mrr')).body.months[11]).toMatchObject({ mrr: '0.00', active_subscriptions: 0 });
  });
});

function mrrFromApi(body: { months: { mrr: string }[] }): number[] {
  return body.months.map((m) => Math.round(Number(m.mrr) * 100));
}
