import { bucketOfSeq, planPage, newestListedFirst, backfillBuckets, BucketCount } from '../../src/lib/listWindow';

/** The plain answer: every position of the newest-first list, as (bucket, index in bucket). */
function positions(counts: BucketCount[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const c of [...counts].sort((a, b) => b.bucket - a.bucket)) for (let i = 0; i < c.count; i++) out.push([c.bucket, i]);
  return out;
}

describe('list window arithmetic', () => {
  it('maps sequence numbers to buckets of the given size', () => {
    expect([1, 2, 3, 4, 6, 7].map((s) => bucketOfSeq(s, 3))).toEqual([0, 0, 0, 1, 1, 2]);
    expect(bucketOfSeq(200, 200)).toBe(0);
    expect(bucketOfSeq(201, 200)).toBe(1);
    expect(() => bucketOfSeq(0, 3)).toThrow();
    expect(() => bucketOfSeq(1, 0)).toThrow();
  });

  it('plans the buckets and offset of a window, newest bucket first', () => {
    const counts = [
      { bucket: 0, count: 3 },
      { bucket: 1, count: 2 },
      { bucket: 2, count: 0 },
      { bucket: 3, count: 3 },
    ];
    expect(planPage(counts, 0, 2)).toEqual({ total: 8, buckets: [3], offset: 0 });
    // bucket 2 is counted 0 but starts inside the window: read, in case its count is behind
    expect(planPage(counts, 2, 2)).toEqual({ total: 8, buckets: [3, 2, 1], offset: 2 });
    expect(planPage(counts, 3, 2)).toEqual({ total: 8, buckets: [2, 1], offset: 0 });
    expect(planPage(counts, 4, 25)).toEqual({ total: 8, buckets: [1, 0], offset: 1 });
    expect(planPage(counts, 8, 25)).toEqual({ total: 8, buckets: [], offset: 0 });
    expect(planPage([], 0, 25)).toEqual({ total: 0, buckets: [], offset: 0 });
  });

  it('covers exactly the window for any counts (negative backfill buckets too)', () => {
    let rnd = 7;
    const next = () => (rnd = (rnd * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 300; round++) {
      const counts: BucketCount[] = [];
      const n = Math.floor(next() * 8);
      for (let b = -3; b < n; b++) if (next() < 0.8) counts.push({ bucket: b, count: Math.floor(next() * 6) });
      const all = positions(counts);
      const skip = Math.floor(next() * (all.length + 3));
      const limit = 1 + Math.floor(next() * 7);
      const plan = planPage(counts, skip, limit);
      expect(plan.total).toBe(all.length);
      const union = positions(counts.filter((c) => plan.buckets.includes(c.bucket)));
      expect(union.slice(plan.offset, plan.offset + limit)).toEqual(all.slice(skip, skip + limit));
      // no nonempty bucket read that holds nothing of the window
      for (const b of plan.buckets) {
        const count = counts.find((c) => c.bucket === b)!.count;
        if (count > 0) expect(all.slice(skip, skip + limit).some(([x]) => x === b)).toBe(true);
      }
    }
  });

  it('orders bucket desc, then created_at desc, then id desc', () => {
    const t = new Date('2026-01-01T00:00:00.000Z');
    const later = new Date(t.getTime() + 1);
    const docs = [
      { _id: 'a', created_at: later, list_bucket: 0 },
      { _id: 'b', created_at: t, list_bucket: 1 },
      { _id: 'c', created_at: t, list_bucket: 0 },
      { _id: 'd', created_at: t, list_bucket: 0 },
    ];
    expect(docs.sort(newestListedFirst).map((d) => d._id)).toEqual(['b', 'a', 'd', 'c']);
  });

  it('gives pre-bucket documents buckets below the lowest in use, newest highest', () => {
    expect(backfillBuckets(5, 2, 0)).toEqual([-3, -2, -2, -1, -1]);
    expect(backfillBuckets(2, 3, -4)).toEqual([-5, -5]);
    expect(backfillBuckets(0, 3, 0)).toEqual([]);
  });
});
