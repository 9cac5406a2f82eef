import { Model } from 'mongoose';
import { pageWindow, pagination, Pagination } from '../../lib/pagination';
import { bucketOfSeq, planPage, newestListedFirst, backfillBuckets, BucketCount } from '../../lib/listWindow';
import { ListCounter, ListCounterDoc } from '../../models/listCounter';
import { Scope, scopeKey, scopeOfDoc } from '../../models/scope';
import { isDuplicateKey } from '../../models/errors';
import { Batcher, Coalescer, sharedReads } from '../../lib/coalesce';
import { MigrationRun, runMigration } from './migrations';
import { groupBy } from '../../lib/groupBy';

/** One page of a list, newest first (created_at desc, then id desc) unless told otherwise: the general path. */
export async function listPage<T>(
  model: Model<any>,
  filter: Record<string, unknown>,
  page: number,
  sort: Record<string, 1 | -1> = { created_at: -1, _id: -1 },
): Promise<{ items: T[]; pagination: Pagination }> {
  const { skip, limit } = pageWindow(page);
  const [items, count] = await Promise.all([
    model.find(filter).sort(sort).skip(skip).limit(limit).lean<T[]>(),
    model.countDocuments(filter),
  ]);
  return { items, pagination: pagination(page, count) };
}

// ---------------------------------------------------------------------------------------------
// Bucketed lists: the whole scope of a collection in creation order.
//
// FerretDB v1 pushes down only equality on top-level scalar fields (no null, sort, skip, or
// limit with a filter), so `listPage` reads every document of the account for each page. A
// listed document instead gets, at create, a sequence number in its (collection, account,
// scope) and is stored with `list_scope` and `list_bucket = (seq - 1) / size`; the bucket
// counts live in `list_counters`. A page reads the counts (one equality query), then only the
// buckets covering it (equality on `list_scope` and `list_bucket`), so its cost depends on the
// bucket size, not on the account's size, and the count needs no `countDocuments`.
//
// FerretDB v1 updates are read-modify-write in Go, not atomic: concurrent `$inc`s lose
// increments (measured: 200 concurrent `$inc`s left 8 to 86). So a count is never incremented:
// a bucket's count is kept only once the head has moved past it (`counted_through` on the head,
// ADR 0608), and then the bucket is recounted (equality query, at most about `size` documents),
// the count `$set`, and recounted again until both agree, so the last `$set` to land is always a
// verified one. Buckets above `counted_through` (the newest, the one the creates go to) are
// counted when a page is read, from the documents it reads anyway; their creates write no count.
// A create or delete reads `counted_through` after its write and recounts its bucket if the head
// has moved past it meanwhile: either it sees the mark, or the recount after the mark sees its
// write. A process dying before a count leaves it behind: a page that reads a bucket whose size
// differs from its count corrects it and plans the page again, and a kept bucket with no count
// yet is counted at read. A duplicated sequence number only makes a bucket slightly bigger.

// A recount decodes every document of its bucket in FerretDB: 50 halves that against 100, and a
// page still reads at most two buckets (ADR 0608). Each scope keeps the size its head was made
// with (the head's `size`), so a change here applies to scopes listed from then on.
const DEFAULT_BUCKET_SIZE = 50;

// Stored in every listed document (`list_scope`): its format must not change.
export const listScopeOf = (scope: Scope): string => scopeKey(scope);
const counterKey = (model: Model<any>, listScope: string) => `${model.collection.collectionName}|${listScope}`;
const HEAD_PREFIX = 'h|';
const headId = (model: Model<any>, listScope: string) => `${HEAD_PREFIX}${counterKey(model, listScope)}`;
const bucketId = (model: Model<any>, listScope: string, bucket: number) => `b|${counterKey(model, listScope)}|${bucket}`;

export interface ListSlot {
  list_scope: string;
  list_bucket: number;
}

/** Slots handed out, and the buckets whose counts are kept from now on (recount them after the insert). */
export interface ListSlots {
  slots: ListSlot[];
  /** Buckets the head moved past with these slots: their counts start being kept. */
  sealed: ListSlot[];
}

async function withUpsertRetry<T>(op: () => Promise<T>): Promise<T> {
  // Two concurrent upserts of a new counter: one inserts, the other gets a duplicate key and
  // then finds the document.
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= 3) throw err;
    }
  }
}

/**
 * Sequence numbers of one scope's list handed out by one counter write for all the creates that
 * asked while the last write went: under a burst (1,000 renewals at one instant) one `$inc` serves
 * many creates instead of each writing the hot head row. Each caller gets its own consecutive run.
 * When the head enters a new bucket, the ones below it start having their counts kept: the mark is
 * written here, where no other write of this head runs in this process, and the run's callers
 * recount the sealed buckets after their inserts.
 */
const slotNumbers = new Batcher<number, { first: number; size: number; sealed: number[] }>(async (headCounterId, counts) => {
  const total = counts.reduce((n, c) => n + c, 0);
  // Through the driver, as the allocation's hot path (ADR 0818): every listed create passes here.
  // `key` lets a page's one read of the counters find the head too.
  const after = (await withUpsertRetry(() =>
    ListCounter.collection.findOneAndUpdate(
      { _id: headCounterId } as never,
      { $inc: { seq: total }, $set: { key: headCounterId.slice(HEAD_PREFIX.length) }, $setOnInsert: { size: DEFAULT_BUCKET_SIZE, counted_through: -1 } },
      { upsert: true, returnDocument: 'after' },
    ),
  )) as ListCounterDoc | null;
  const size = after!.size ?? DEFAULT_BUCKET_SIZE;
  const keepThrough = bucketOfSeq(after!.seq!, size) - 1;
  const marked = after!.counted_through;
  let sealed: number[] = [];
  if (marked === undefined || marked === null || keepThrough > marked) {
    // A scope listed before the mark existed recounted every bucket on each create: all its
    // buckets are kept already. A lost update between processes can only lower the mark, which
    // makes pages count more buckets themselves, never fewer.
    await ListCounter.collection.updateOne({ _id: headCounterId } as never, { $max: { counted_through: keepThrough } });
    if (typeof marked === 'number') sealed = Array.from({ length: keepThrough - marked }, (_, i) => marked + 1 + i);
  }
  let next = after!.seq! - total + 1;
  return counts.map((c) => {
    const first = next;
    next += c;
    return { first, size, sealed };
  });
});

/** The next `count` creation slots of `scope` in `model`'s list, oldest first (documents written in bulk). */
export async function assignListSlots(model: Model<any>, scope: Scope, count: number): Promise<ListSlots> {
  const list_scope = listScopeOf(scope);
  const { first, size, sealed } = await slotNumbers.run(headId(model, list_scope), count);
  return {
    slots: Array.from({ length: count }, (_, i) => ({ list_scope, list_bucket: bucketOfSeq(first + i, size) })),
    sealed: sealed.map((list_bucket) => ({ list_scope, list_bucket })),
  };
}

async function countBucket(model: Model<any>, list_scope: string, list_bucket: number): Promise<number> {
  return model.countDocuments({ list_scope, list_bucket });
}

async function setBucketCount(model: Model<any>, list_scope: string, bucket: number, count: number): Promise<void> {
  await withUpsertRetry(() =>
    ListCounter.updateOne({ _id: bucketId(model, list_scope, bucket) }, { $set: { key: counterKey(model, list_scope), bucket, count } }, { upsert: true }),
  );
}

// A bucket's recount only has to start after the caller's insert or delete: concurrent callers of
// one bucket share runs (1,000 renewals at one instant made about five counts of a 135-document
// bucket each, and most of FerretDB's work; docs/adr/0609-coalesced-follow-up-writes.md).
const recounts = new Coalescer();

/**
 * The head's `counted_through`, read after the caller's write (concurrent callers share a read that
 * starts after each one's call). Undefined where the scope has no head or predates the mark: then
 * every bucket's count is kept.
 */
const readCountedThrough = sharedReads(async (headCounterId) => {
  const head = await readHead(headCounterId);
  return typeof head?.counted_through === 'number' ? head.counted_through : undefined;
});

/** A list's head by `_id`, through the driver (its sequence and mark only). */
async function readHead(headCounterId: string): Promise<Pick<ListCounterDoc, 'seq' | 'counted_through'> | null> {
  return (await ListCounter.collection.findOne({ _id: headCounterId } as never, { projection: { seq: 1, counted_through: 1 } })) as ListCounterDoc | null;
}

/**
 * Keeps the counts of the buckets of `docs` right after they were inserted or deleted (or of the
 * buckets an `assignListSlots` sealed): recounts those whose counts are kept; pages count the others.
 */
export async function recountListSlots(model: Model<any>, docs: ReadonlyArray<{ list_scope?: string | null; list_bucket?: number | null }>): Promise<void> {
  const slots = new Map<string, ListSlot>();
  for (const d of docs) {
    if (typeof d.list_scope !== 'string' || typeof d.list_bucket !== 'number') continue;
    slots.set(`${d.list_scope}|${d.list_bucket}`, { list_scope: d.list_scope, list_bucket: d.list_bucket });
  }
  const marks = new Map<string, number | undefined>();
  for (const s of slots.values()) {
    if (!marks.has(s.list_scope)) marks.set(s.list_scope, await readCountedThrough(headId(model, s.list_scope)));
    const mark = marks.get(s.list_scope);
    if (mark !== undefined && s.list_bucket > mark) continue;
    await recounts.run(bucketId(model, s.list_scope, s.list_bucket), () => recountBucket(model, s.list_scope, s.list_bucket));
  }
}

async function recountBucket(model: Model<any>, list_scope: string, list_bucket: number): Promise<void> {
  // Count, set, and count again until the two agree: another process's older count that lands
  // after ours is then overwritten by whichever writer sets last (it re-reads after).
  let count = await countBucket(model, list_scope, list_bucket);
  for (let attempt = 0; attempt < 5; attempt++) {
    await setBucketCount(model, list_scope, list_bucket, count);
    const again = await countBucket(model, list_scope, list_bucket);
    if (again === count) break;
    count = again;
  }
}

/** `model.create(fields)` with a list slot, and the counts it concerns kept. Returns the created document. */
export async function createListed<T = any>(model: Model<any>, scope: Scope, fields: Record<string, unknown>): Promise<T> {
  const { slots, sealed } = await assignListSlots(model, scope, 1);
  // Sealed buckets are recounted whether or not the create succeeds (else a page would count them).
  const [created] = await Promise.all([model.create({ ...fields, ...slots[0] }), recountListSlots(model, sealed)]);
  await recountListSlots(model, slots);
  return created as T;
}

/** A scope's list as its counters tell it: the kept counts, and the buckets a reader counts itself. */
interface ListCounts {
  kept: BucketCount[];
  /** Newest and not-yet-counted buckets: counted from their documents. */
  counted: number[];
  /** The head's `counted_through`, or null where every bucket's count is kept. */
  keptThrough: number | null;
  /** The scope's bucket size. */
  size: number;
}

async function readListCounts(model: Model<any>, list_scope: string): Promise<ListCounts> {
  // One read: the head carries `key` too (since `counted_through` exists).
  const docs = await ListCounter.find({ key: counterKey(model, list_scope) }).lean<ListCounterDoc[]>();
  const entries = docs.filter((d) => typeof d.bucket === 'number').map((d) => ({ bucket: d.bucket!, count: d.count ?? 0 }));
  const head = docs.find((d) => d._id === headId(model, list_scope));
  const size = head?.size ?? DEFAULT_BUCKET_SIZE;
  if (typeof head?.counted_through !== 'number' || typeof head.seq !== 'number' || head.seq < 1) return { kept: entries, counted: [], keptThrough: null, size };
  const keptThrough = head.counted_through;
  const kept = entries.filter((c) => c.bucket <= keptThrough);
  const have = new Set(kept.map((c) => c.bucket));
  const counted: number[] = [];
  for (let b = 0; b <= keptThrough; b++) if (!have.has(b)) counted.push(b);
  for (let b = keptThrough + 1; b <= bucketOfSeq(head.seq, size); b++) counted.push(b);
  return { kept, counted, keptThrough, size };
}

const readBucket = <T>(model: Model<any>, list_scope: string, list_bucket: number) => model.find({ list_scope, list_bucket }).lean<(T & { _id: string; created_at: Date })[]>();

/** How many of `scope`'s documents the list of `model` holds (a page's total): its kept counts, and the newest buckets counted. */
export async function listedTotal(model: Model<any>, scope: Scope): Promise<number> {
  const list_scope = listScopeOf(scope);
  const { kept, counted } = await readListCounts(model, list_scope);
  const live = await Promise.all(counted.map((b) => countBucket(model, list_scope, b)));
  return kept.reduce((n, c) => n + c.count, 0) + live.reduce((n, c) => n + c, 0);
}

/** How many slots `scope`'s list in `model` has handed out (creates begun, failed ones too): one read by `_id`. */
export async function listSlotsHandedOut(model: Model<any>, scope: Scope): Promise<number> {
  return (await readHead(headId(model, listScopeOf(scope))))?.seq ?? 0;
}

/** The buckets of `scope`'s list in `model` that may hold documents, newest first (for walks with a filter). */
export async function listedBuckets(model: Model<any>, scope: Scope): Promise<number[]> {
  const { kept, counted } = await readListCounts(model, listScopeOf(scope));
  return [...kept.filter((c) => c.count > 0).map((c) => c.bucket), ...counted].sort((a, b) => b - a);
}

/** Page `page` of `scope`'s documents in `model`, newest first (creation order). */
export async function listScopePage<T>(model: Model<any>, scope: Scope, page: number): Promise<{ items: T[]; pagination: Pagination }> {
  const { skip, limit } = pageWindow(page);
  const list_scope = listScopeOf(scope);
  const { kept, counted, keptThrough } = await readListCounts(model, list_scope);
  // Page 1 reads the newest buckets anyway, so it counts them from their documents; a later page
  // only counts them (the documents stay in the database).
  const read = new Map<number, (T & { _id: string; created_at: Date })[]>();
  const live = await Promise.all(
    counted.map(async (bucket) => {
      if (skip > 0) return { bucket, count: await countBucket(model, list_scope, bucket) };
      const docs = await readBucket<T>(model, list_scope, bucket);
      read.set(bucket, docs);
      return { bucket, count: docs.length };
    }),
  );
  await Promise.all(live.filter((c) => keptThrough !== null && c.bucket <= keptThrough).map((c) => setBucketCount(model, list_scope, c.bucket, c.count)));
  let counts: BucketCount[] = [...kept, ...live];
  for (let attempt = 0; ; attempt++) {
    const plan = planPage(counts, skip, limit);
    const fetched = await Promise.all(plan.buckets.map((b) => read.get(b) ?? readBucket<T>(model, list_scope, b)));
    const stale = plan.buckets.map((b, i) => ({ bucket: b, count: fetched[i].length })).filter((c) => c.count !== counts.find((x) => x.bucket === c.bucket)?.count);
    if (stale.length === 0 || attempt >= 3) {
      const items = fetched.flat().sort(newestListedFirst).slice(plan.offset, plan.offset + limit);
      return { items: items as T[], pagination: pagination(page, plan.total) };
    }
    // A count that missed a write: correct it and plan the page again.
    await Promise.all(stale.map((c) => setBucketCount(model, list_scope, c.bucket, c.count)));
    counts = counts.map((c) => stale.find((s) => s.bucket === c.bucket) ?? c);
  }
}

/** The `migrations` record of a collection's list backfill. */
export function listSlotsMigration(model: Model<any>): string {
  return `list_slots.${model.collection.collectionName}`;
}

/**
 * Gives documents that predate bucketing (no `list_bucket`) a slot, oldest first, in buckets
 * below every bucket in use of their scope, and counts them. Idempotent; each collection is a
 * migration (`list_slots.<collection>`), so once done a later start costs one read by `_id`.
 */
export async function backfillListSlots(models: ReadonlyArray<Model<any>>): Promise<number> {
  let slotted = 0;
  for (const model of models) slotted += await runMigration(listSlotsMigration(model), () => slotUnlisted(model));
  return slotted;
}

async function slotUnlisted(model: Model<any>): Promise<MigrationRun> {
  // Done before the backfill was a migration: its marker was a `list_counters` document.
  if (await ListCounter.exists({ _id: `backfill|${model.collection.collectionName}` })) return { changed: 0, finished: true };
  const missing = (
    await model.find({}, { _id: 1, account_id: 1, sandbox: 1, created_at: 1, list_bucket: 1 }).lean<{ _id: string; account_id: string; sandbox?: string | null; created_at: Date; list_bucket?: number }[]>()
  ).filter((d) => typeof d.list_bucket !== 'number');
  for (const [list_scope, docs] of groupBy(missing, (d) => listScopeOf(scopeOfDoc(d)))) {
    docs.sort((a, b) => -newestListedFirst(a, b)); // oldest first
    const { kept, size } = await readListCounts(model, list_scope);
    const buckets = backfillBuckets(docs.length, size, Math.min(0, ...kept.map((c) => c.bucket)));
    for (let i = 0; i < docs.length; i += 500) {
      const ops = docs.slice(i, i + 500).map((d, j) => ({ updateOne: { filter: { _id: d._id }, update: { $set: { list_scope, list_bucket: buckets[i + j] } } } }));
      await model.bulkWrite(ops, { ordered: false });
    }
    await recountListSlots(model, docs.map((_, i) => ({ list_scope, list_bucket: buckets[i] })));
  }
  return { changed: missing.length, finished: true };
}
