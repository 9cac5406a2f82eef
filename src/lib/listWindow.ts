/**
 * Pure arithmetic of bucketed list pages (see src/services/writes/listing.ts). A listed document
 * carries `list_bucket`: its creation sequence number in its (collection, account, scope),
 * divided by the bucket size. A page is found from the buckets' counts alone, newest bucket
 * first, and only the buckets overlapping it are read.
 */

export interface BucketCount {
  bucket: number;
  count: number;
}

/** The bucket of the `seq`-th document (1-based) of a scope. */
export function bucketOfSeq(seq: number, size: number): number {
  if (!Number.isInteger(seq) || seq < 1) throw new Error(`sequence must be a positive integer, got ${seq}`);
  if (!Number.isInteger(size) || size < 1) throw new Error(`bucket size must be a positive integer, got ${size}`);
  return Math.floor((seq - 1) / size);
}

export interface PagePlan {
  /** Documents in the scope (the sum of the counts). */
  total: number;
  /** The buckets to read, newest first; empty when the window is past the end. */
  buckets: number[];
  /** Where the window starts in the newest-first union of those buckets. */
  offset: number;
}

/**
 * The buckets holding positions [skip, skip + limit) of the newest-first list. A bucket counted
 * 0 that starts inside the window is read too, so a count that missed an insert is seen.
 */
export function planPage(counts: readonly BucketCount[], skip: number, limit: number): PagePlan {
  const sorted = [...counts].sort((a, b) => b.bucket - a.bucket);
  const total = sorted.reduce((n, c) => n + Math.max(0, c.count), 0);
  const buckets: number[] = [];
  let offset = 0;
  let start = 0; // position of the current bucket's first (newest) document
  for (const c of sorted) {
    const end = start + Math.max(0, c.count);
    const overlaps = end > start ? end > skip && start < skip + limit : start >= skip && start < skip + limit;
    if (overlaps) {
      if (buckets.length === 0) offset = skip - start;
      buckets.push(c.bucket);
    }
    if (end >= skip + limit) break;
    start = end;
  }
  return { total, buckets, offset };
}

export interface Listed {
  _id: string;
  created_at: Date | string;
  list_bucket?: number | null;
}

/** Newest first: bucket desc, then created_at desc, then id desc. */
export function newestListedFirst(a: Listed, b: Listed): number {
  const bucket = (b.list_bucket ?? 0) - (a.list_bucket ?? 0);
  if (bucket !== 0) return bucket;
  const time = new Date(b.created_at).getTime() - new Date(a.created_at).getTime();
  if (time !== 0) return time;
  return a._id < b._id ? 1 : a._id > b._id ? -1 : 0;
}

/**
 * Buckets for documents that predate bucketing (the backfill): `docs` sorted oldest first get
 * buckets below `below` (the lowest bucket in use, or 0), `size` per bucket, the newest just
 * below it, so they list after every bucketed document.
 */
export function backfillBuckets(count: number, size: number, below: number): number[] {
  const out: number[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const fromNewest = count - 1 - i;
    out[i] = below - 1 - Math.floor(fromNewest / size);
  }
  return out;
}
