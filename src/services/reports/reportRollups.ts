/**
 * Report rollups (MRR, collections) per account and scope: precomputed so a report reads one
 * state document and a few part documents instead of every subscription or transaction.
 *
 * - A write that changes a rollup's source (a subscription created or deleted; a transaction
 *   recorded, priced, allocated, unallocated or deleted; an invoice's status or total changed,
 *   or the invoice deleted) calls `rollupsChanged` after it: the rollup's mark (`dirty_gen`, a
 *   document of its own) gets a new random value, and, when a rebuild started since the write
 *   before (it may have ended current), the scope's rollup workflow is signalled (signal-with-start
 *   through the workflow-start outbox), which rebuilds it after a debounce, and again while a
 *   rebuild ends dirty. One statement: the mark's previous value tells it (`markChanged`).
 * - A rebuild (`rebuildRollup`, the activity) writes a generation of its own on the mark, then
 *   reads the source, computes the rollup (a pure function of the source: never an increment),
 *   writes it as a new build, points the state at it (compare-and-set on the build it replaced)
 *   with `built_gen` = its generation, and deletes the old build's parts. Rebuilding twice gives
 *   the same rollup.
 * - A report uses the rollup only when it is current: `built_gen === dirty_gen` (no source write
 *   marked since the source was read) and every part of the build was found. Otherwise it
 *   computes live, as before. So a report is never stale: right after a payment it is computed
 *   live, and from the rollup again once the rebuild ran (a few seconds).
 * The one gap: a process that dies between a source write and its mark leaves the rollup looking
 * current without that write, until the next write to the same rollup marks it.
 */
import { randomBytes } from 'node:crypto';
import { ReportRollup, ReportRollupDoc, ReportRollupMark, ReportRollupMarkDoc, ReportRollupState, ReportRollupStateDoc, RollupKind } from '../../models/reportRollup';
import { upsertAgainOnDuplicate } from '../../models/errors';
import { Scope, scopeKey } from '../../models/scope';
import type { OpenInvoice } from '../../billing/receivables';
import { collectionsRollup, CollectionsRollup, mrrRollup, MrrRollupMonth, receivablesRollup, ReceivablesGroup } from '../../billing/rollups';
import { loadCollectionsSource, loadMrrSubscriptions, loadOpenInvoices } from './reportSources';
import type { Dependencies } from '../../dependencies';
import { ROLLUP_MAX_DELAY_MS } from '../../temporal/reportDefinitions';
import { groupBy } from '../../lib/groupBy';

const CREDIT_PART = 'credit';
const DUE_PART = 'due:';
const INVOICES_PART = 'invoices:';
/** Open invoices per part of the receivables rollup. */
const INVOICE_CHUNK = 1_000;

export function rollupStateId(scope: Scope, kind: RollupKind): string {
  return `${kind}|${scope.accountId}|${scope.sandbox ?? ''}`;
}

const randomGen = () => randomBytes(9).toString('base64url');

/**
 * The state, created if missing (`$set` the scope fields, which never change, so the update is
 * never empty). "No build" is `''`, not null, so the compare-and-set below is a plain string equality.
 */
async function upsertState(scope: Scope, kind: RollupKind): Promise<void> {
  const fields = { account_id: scope.accountId, sandbox: scope.sandbox, kind };
  const _id = rollupStateId(scope, kind);
  await upsertAgainOnDuplicate(() => ReportRollupState.collection.updateOne({ _id } as never, { $set: fields, $setOnInsert: { built_gen: '', build: '', parts: 0, built_at: null } }, { upsert: true }));
}

/**
 * A rollup dirty for longer than this with no rebuild started gets a signal from the next write
 * anyway: the write that made it dirty may have died before its signal (a rollup workflow that is
 * alive starts a rebuild of a dirty rollup at least every ROLLUP_MAX_DELAY_MS).
 */
const SIGNAL_DIRTY_AFTER_MS = 4 * ROLLUP_MAX_DELAY_MS;

/**
 * What a mark holds: a rebuild's generation (`R:`, written as it starts) or a write's (`W:`).
 * Marks written by earlier versions have neither prefix.
 */
const REBUILD_GEN = 'R:';
const WRITE_GEN = 'W:';

/**
 * Marks the rollup's source changed and tells whether the rollup workflow needs a signal
 * (docs/adr/0316-rollup-freshness-and-signals.md), from the mark as read after the write:
 * - it holds a write's generation: the rollup is dirty already, and the write that made it so
 *   signalled; nothing is written. Unless it has been dirty for a minute with no rebuild started:
 *   that signal may have died with its process, so this write marks and signals;
 * - it holds a rebuild's: no write marked since a rebuild started, so that rebuild may have ended
 *   current and gone idle: a new `dirty_gen` (one write), signalled (if the rebuild is still
 *   running, its last read of the mark sees this one and it rebuilds again; the signal is one too
 *   many, once per rebuild). Decided from the value the write replaced, as a rebuild may start
 *   between the read and the write;
 * - none (its first mark), or one of an earlier version (no prefix): marked and signalled, as after
 *   a rebuild; the writes after it find this one's.
 */
async function markChanged(scope: Scope, kind: RollupKind): Promise<boolean> {
  const id = rollupStateId(scope, kind);
  const now = new Date();
  // Read first: a write's generation on the mark, read after this write, means that no rebuild
  // has started since that write marked it, so the rebuild still to come (that write signalled
  // it) reads the source after this write too. Nothing to write then, and no signal: one read by
  // `_id` instead of a read-modify-write of a document every write of the scope goes to.
  const seen = (await ReportRollupMark.collection.findOne({ _id: id } as never)) as ReportRollupMarkDoc | null;
  if (seen?.dirty_gen.startsWith(WRITE_GEN) && !overdue(seen, now)) return false;
  const before = (await upsertAgainOnDuplicate(() =>
    ReportRollupMark.collection.findOneAndUpdate(
      { _id: id } as never,
      // `dirty_since`: when the first write since the last rebuild's start marked it (a rebuild unsets it).
      { $set: { dirty_gen: WRITE_GEN + randomGen() }, $min: { dirty_since: now } },
      { upsert: true, returnDocument: 'before' },
    ),
  )) as ReportRollupMarkDoc | null;
  if (!before?.dirty_gen.startsWith(WRITE_GEN)) return true;
  return overdue(before, now);
}

/** Dirty for longer than SIGNAL_DIRTY_AFTER_MS with no rebuild started (or since a time not kept). */
function overdue(mark: ReportRollupMarkDoc, now: Date): boolean {
  return !mark.dirty_since || now.getTime() - new Date(mark.dirty_since).getTime() > SIGNAL_DIRTY_AFTER_MS;
}

/** The rollup's state and its current `dirty_gen` (its mark's, else, for a state written by an earlier version, the state's), read together. */
async function readState(id: string): Promise<{ state: ReportRollupStateDoc | null; dirtyGen: string }> {
  const [state, mark] = await Promise.all([
    ReportRollupState.findById(id).lean<ReportRollupStateDoc>(),
    ReportRollupMark.findById(id).lean<ReportRollupMarkDoc>(),
  ]);
  return { state, dirtyGen: mark?.dirty_gen ?? state?.dirty_gen ?? '' };
}

/**
 * After a write that changed the source of these rollups: marks them stale (reports compute live
 * until the rebuild), then asks the scope's rollup workflow to rebuild them
 * (`deps.workflows.reportRollup`). Without Temporal (plain API tests) nothing rebuilds them: the
 * reports stay live.
 */
export async function rollupsChanged(deps: Dependencies, scope: Scope, ...kinds: RollupKind[]): Promise<void> {
  // Independent documents: marked at once rather than one round trip after another (a write's
  // hot path). Concurrent writes of one scope share a mark and a signal that start after their
  // own writes (a burst of renewals all wrote the same state and outbox documents, one at a time).
  await Promise.all(
    kinds.map((kind) =>
      deps.inFlight.run(`rollup|${scopeKey(scope)}|${kind}`, async () => {
        if (await markChanged(scope, kind)) await deps.workflows.reportRollup.stale(scope, [kind]);
      }),
    ),
  );
}

/** Each part of a rollup as stored: `[part, data]`. */
async function buildParts(scope: Scope, kind: RollupKind): Promise<[string, unknown][]> {
  if (kind === 'mrr') return mrrRollup(await loadMrrSubscriptions(scope)).map((row) => [row.month, row]);
  if (kind === 'receivables') {
    const open = await loadOpenInvoices(scope);
    const byMonth = groupBy(receivablesRollup(open), (g) => g.due_date.slice(0, 7));
    // The invoices themselves for the report's lists, in chunks (one small document per invoice
    // costs FerretDB a whole-document decode each; a chunk is one), in id order.
    const entries: OpenInvoiceEntry[] = open
      .map((i) => ({ id: i.id, customer_id: i.customer_id, status: i.status, due_date: i.due_date, total_amount: i.total_amount, amount_paid: i.amount_paid, created_at: i.created_at.getTime() }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const chunks: [string, unknown][] = [];
    for (let i = 0; i < entries.length; i += INVOICE_CHUNK) chunks.push([`${INVOICES_PART}${String(i / INVOICE_CHUNK).padStart(5, '0')}`, entries.slice(i, i + INVOICE_CHUNK)]);
    return [...[...byMonth.entries()].map(([m, g]): [string, unknown] => [`${DUE_PART}${m}`, g]), ...chunks];
  }
  const { transactions, markedPaid } = await loadCollectionsSource(scope);
  const rollup = collectionsRollup(transactions, markedPaid);
  return [...rollup.months.map((m): [string, unknown] => [m.month, m.rows]), [CREDIT_PART, rollup.unallocated_credit]];
}

export interface RebuildOutcome {
  kind: RollupKind;
  parts: number;
  /** False when another rebuild replaced the same build first (this one's parts were dropped). */
  swapped: boolean;
  /** Whether the rollup was current once written (no source write marked during the rebuild). */
  current: boolean;
}

/** Rebuilds one rollup from its source (idempotent: see the module comment). The activity. */
export async function rebuildRollup(scope: Scope, kind: RollupKind): Promise<RebuildOutcome> {
  await upsertState(scope, kind);
  const _id = rollupStateId(scope, kind);
  // A generation of its own on the mark before the source is read: a write marked after this
  // point makes the build not current, and the next write sees that a rebuild started.
  const gen = REBUILD_GEN + randomGen();
  await upsertAgainOnDuplicate(() => ReportRollupMark.collection.updateOne({ _id } as never, { $set: { dirty_gen: gen }, $unset: { dirty_since: '' } }, { upsert: true }));
  const before = await ReportRollupState.findById(_id).lean<ReportRollupStateDoc>();
  const previous = before?.build ?? '';
  const parts = await buildParts(scope, kind);
  const build = `${kind}_${randomGen()}`;
  const docs: ReportRollupDoc[] = parts.map(([part, data]) => ({ _id: `${build}|${part}`, build, account_id: scope.accountId, sandbox: scope.sandbox, kind, part, data }));
  for (let i = 0; i < docs.length; i += 500) await ReportRollup.collection.insertMany(docs.slice(i, i + 500) as never[], { ordered: false });
  const swap = await ReportRollupState.collection.updateOne(
    { _id, build: previous } as never,
    { $set: { build, built_gen: gen, parts: docs.length, built_at: new Date() } },
  );
  if (swap.matchedCount === 0) {
    await ReportRollup.collection.deleteMany({ build } as never);
    return { kind, parts: docs.length, swapped: false, current: false };
  }
  if (previous) await ReportRollup.collection.deleteMany({ build: previous } as never);
  return { kind, parts: docs.length, swapped: true, current: (await readState(_id)).dirtyGen === gen };
}

/** The current build's parts, or null when the rollup is missing, stale, or being replaced. */
async function readCurrent(scope: Scope, kind: RollupKind): Promise<ReportRollupDoc[] | null> {
  const { state, dirtyGen } = await readState(rollupStateId(scope, kind));
  if (!state?.build || (state.built_gen ?? '') !== dirtyGen) return null;
  // One equality on `build` (pushed down to its index).
  const parts = await ReportRollup.find({ build: state.build }).lean<ReportRollupDoc[]>();
  // Fewer: the build was replaced and its parts deleted while being read.
  return parts.length === state.parts ? parts : null;
}

export async function readMrrRollup(scope: Scope): Promise<MrrRollupMonth[] | null> {
  const parts = await readCurrent(scope, 'mrr');
  if (!parts) return null;
  return parts.map((p) => p.data as MrrRollupMonth).sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
}

export async function readCollectionsRollup(scope: Scope): Promise<CollectionsRollup | null> {
  const parts = await readCurrent(scope, 'collections');
  if (!parts) return null;
  const credit = parts.find((p) => p.part === CREDIT_PART);
  if (!credit) return null;
  return {
    months: parts
      .filter((p) => p.part !== CREDIT_PART)
      .map((p) => ({ month: p.part, rows: p.data as CollectionsRollup['months'][number]['rows'] }))
      .sort((a, b) => (a.month < b.month ? -1 : 1)),
    unallocated_credit: credit.data as CollectionsRollup['unallocated_credit'],
  };
}

/** An open invoice as kept in the receivables rollup (`created_at` in ms). */
export type OpenInvoiceEntry = OpenInvoice & { created_at: number };

/** The open-invoice groups (for the overview's totals) and the open invoices (for the report), or null when not current. */
export async function readReceivablesRollup(scope: Scope): Promise<{ groups: ReceivablesGroup[]; invoices: OpenInvoiceEntry[] } | null> {
  const parts = await readCurrent(scope, 'receivables');
  if (!parts) return null;
  return {
    groups: parts.filter((p) => p.part.startsWith(DUE_PART)).flatMap((p) => p.data as ReceivablesGroup[]),
    invoices: parts.filter((p) => p.part.startsWith(INVOICES_PART)).flatMap((p) => p.data as OpenInvoiceEntry[]),
  };
}
