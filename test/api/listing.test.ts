/**
 * Bucketed list pages (src/services/writes/listing.ts) with a bucket size of 4, so pages of 25 span
 * several buckets: every page and its pagination equal the plain newest-first answer, across
 * creates, deletes, counters gone wrong, concurrent creates and the start-up backfill.
 */
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi, Client } from '../support/api';
import { backfillListSlots, assignListSlots, recountListSlots, listedTotal, listSlotsHandedOut, listSlotsMigration, ListSlot } from '../../src/services/writes/listing';
import { Migration } from '../../src/models/migration';
import { ListCounter } from '../../src/models/listCounter';
import { Product } from '../../src/models/product';
import { Customer } from '../../src/models/customer';
import { newId, ID_PREFIX } from '../../src/lib/ids';
import { DEFAULT_SANDBOX } from '../../src/services/accounts/accounts';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const PAGE = 25;

/**
 * Makes `collection`'s list of the scope use buckets of 4, so that pages of 25 span several: a
 * scope keeps the size its head was made with. Before the scope's first create, or while its head
 * is still in bucket 0 (an account's wallet, made with the account).
 */
async function bucketsOf4(collection: string, accountId: string, sandbox: string | null = null): Promise<void> {
  const key = `${collection}|${accountId}|${sandbox ?? ''}`;
  await ListCounter.updateOne({ _id: `h|${key}` }, { $set: { size: 4, key }, $setOnInsert: { seq: 0, counted_through: -1 } }, { upsert: true });
}

/** Every page of `path` (one past the end too) against `newestFirst`, the expected ids. */
async function expectPages(c: Client, path: string, key: string, newestFirst: string[]): Promise<void> {
  const pages = Math.ceil(newestFirst.length / PAGE);
  for (let page = 1; page <= pages + 1; page++) {
    const res = await c.get(`${path}?page=${page}`);
    expect(res.status).toBe(200);
    expect(res.body[key].map((x: { id: string }) => x.id)).toEqual(newestFirst.slice((page - 1) * PAGE, page * PAGE));
    expect(res.body.pagination).toEqual({ page, pages, count: newestFirst.length });
  }
}

/** The kept bucket counts of a list (`<collection>|<account>|<sandbox or ''>`), by bucket. */
async function bucketCounts(key: string): Promise<{ _id: string; bucket: number; count: number }[]> {
  const docs = await ListCounter.find({ key }).lean<{ _id: string; bucket?: number; count: number }[]>();
  return docs.filter((d) => typeof d.bucket === 'number').sort((x, y) => x.bucket! - y.bucket!) as { _id: string; bucket: number; count: number }[];
}

/** Plain sort of the scope's products, as the general path would answer. */
async function plainProducts(accountId: string, sandbox: string | null): Promise<string[]> {
  const docs = await Product.find({ account_id: accountId }).sort({ created_at: -1, _id: -1 }).lean<{ _id: string; sandbox: string | null }[]>();
  return docs.filter((d) => (d.sandbox ?? null) === sandbox).map((d) => d._id);
}

describe('bucketed list pages', () => {
  it('pages stay equal to a plain sort across bucket boundaries under creates and deletes', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('products', a.account_id);
    await bucketsOf4('products', a.account_id, DEFAULT_SANDBOX);
    const other = await newAccount(api.url);
    await bucketsOf4('products', other.account_id);
    const created: string[] = [];
    for (let i = 0; i < 57; i++) {
      created.push((await a.api.post('/v1/products', { name: `p${i}` })).body.id);
      if (i % 10 === 0) await a.sandbox.post('/v1/products', { name: `s${i}` });
      if (i % 7 === 0) await other.api.post('/v1/products', { name: `o${i}` });
    }
    let expected = [...created].reverse();
    expect(await plainProducts(a.account_id, null)).toEqual(expected);
    await expectPages(a.api, '/v1/products', 'products', expected);

    // Deletes: a whole bucket (seq 21-24 = bucket 5), the newest, the oldest, and some on page boundaries.
    const gone = new Set([created[20], created[21], created[22], created[23], created[56], created[0], created[31], created[32], created[7]]);
    for (const id of gone) expect((await a.api.del(`/v1/products/${id}`)).status).toBe(204);
    expected = expected.filter((id) => !gone.has(id));
    await expectPages(a.api, '/v1/products', 'products', expected);
    // The total a page shows, from the bucket counts alone (what the renewals bench polls), per scope.
    expect(await listedTotal(Product, { accountId: a.account_id, sandbox: null })).toBe(expected.length);
    expect(await listedTotal(Product, { accountId: other.account_id, sandbox: null })).toBe(9);

    // Then more creates after the deletes.
    for (let i = 0; i < 6; i++) expected.unshift((await a.api.post('/v1/products', { name: `q${i}` })).body.id);
    expect(await plainProducts(a.account_id, null)).toEqual(expected);
    await expectPages(a.api, '/v1/products', 'products', expected);

    // The other scopes are untouched.
    expect((await a.sandbox.get('/v1/products')).body.pagination.count).toBe(6);
    const sandbox = (await Product.findOne({ account_id: a.account_id, sandbox: { $ne: null } }).lean<{ sandbox: string }>())!.sandbox;
    await expectPages(a.sandbox, '/v1/products', 'products', await plainProducts(a.account_id, sandbox));
    await expectPages(other.api, '/v1/products', 'products', await plainProducts(other.account_id, null));
  });

  it('corrects a counter that missed writes when a page reads its bucket', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('products', a.account_id);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.unshift((await a.api.post('/v1/products', { name: `p${i}` })).body.id);
    // Sequence 1-10 in buckets of 4: the head is in bucket 2, so buckets 0 and 1 have kept counts.
    const counters = await bucketCounts(`products|${a.account_id}|`);
    expect(counters.map((c) => [c.bucket, c.count])).toEqual([[0, 4], [1, 4]]);
    await ListCounter.updateOne({ _id: counters.find((c) => c.bucket === 0)!._id }, { $set: { count: 0 } });
    await ListCounter.updateOne({ _id: counters.find((c) => c.bucket === 1)!._id }, { $set: { count: 9 } });
    await expectPages(a.api, '/v1/products', 'products', ids);
    expect((await bucketCounts(`products|${a.account_id}|`)).map((c) => [c.bucket, c.count])).toEqual([[0, 4], [1, 4]]);
    // A kept count lost (its process died before writing it): the page counts that bucket and keeps it.
    await ListCounter.deleteOne({ _id: counters.find((c) => c.bucket === 0)!._id });
    await expectPages(a.api, '/v1/products', 'products', ids);
    expect((await bucketCounts(`products|${a.account_id}|`)).map((c) => [c.bucket, c.count])).toEqual([[0, 4], [1, 4]]);
  });

  it('keeps every customer and wallet listed under concurrent creates, and counts customer deletes', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('customers', a.account_id);
    await bucketsOf4('wallets', a.account_id);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => a.api.post('/v1/customers', { email: `c${i}@example.com` })));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const ids = results.map((r) => r.body.id as string);
    const seen: string[] = [];
    for (let page = 1; page <= 2; page++) {
      const res = await a.api.get(`/v1/customers?page=${page}`);
      expect(res.body.pagination).toEqual({ page, pages: 2, count: 30 });
      seen.push(...res.body.customers.map((c: { id: string }) => c.id));
    }
    expect([...seen].sort()).toEqual([...ids].sort());
    // The account's own wallet plus one per customer.
    expect((await a.api.get('/v1/wallets')).body.pagination.count).toBe(31);

    for (const id of ids.slice(0, 7)) expect((await a.api.del(`/v1/customers/${id}`)).status).toBe(204);
    const left = new Set(ids.slice(7));
    const after: string[] = [];
    for (let page = 1; page <= 2; page++) after.push(...(await a.api.get(`/v1/customers?page=${page}`)).body.customers.map((c: { id: string }) => c.id));
    expect(new Set(after)).toEqual(left);
    expect((await a.api.get('/v1/customers')).body.pagination.count).toBe(23);
    expect((await a.api.get('/v1/wallets')).body.pagination.count).toBe(24);
  });

  it('slots taken in bulk list documents written in bulk in creation order, between single creates', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('customers', a.account_id);
    const before = (await a.api.post('/v1/customers', { email: 'before@example.com' })).body.id as string;
    // 11 customers written in one insert with 11 slots from one counter write (bucket size 4: they span buckets).
    const { slots, sealed } = await assignListSlots(Customer, { accountId: a.account_id, sandbox: null }, 11);
    expect(slots).toHaveLength(11);
    const now = Date.now();
    const bulk = slots.map((slot, i) => ({
      _id: newId(ID_PREFIX.customer), account_id: a.account_id, sandbox: null, email: `bulk${i}@example.com`, first_name: null, last_name: null,
      created_at: new Date(now + i), updated_at: new Date(now + i), ...slot,
    }));
    await Customer.collection.insertMany(bulk as never[]);
    await recountListSlots(Customer, [...slots, ...sealed]);
    const after = (await a.api.post('/v1/customers', { email: 'after@example.com' })).body.id as string;
    await expectPages(a.api, '/v1/customers', 'customers', [after, ...bulk.map((d) => d._id).reverse(), before]);
  });

  it('hands concurrent slot requests of one scope consecutive numbers, none twice, from shared counter writes', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('customers', a.account_id);
    const scope = { accountId: a.account_id, sandbox: null };
    const headId = `h|customers|${a.account_id}|`;
    const before = (await ListCounter.findById(headId).lean<{ seq: number }>())?.seq ?? 0;
    const counts = Array.from({ length: 24 }, (_, i) => 1 + (i % 3)); // 48 slots in 24 requests
    const slots = (await Promise.all(counts.map((n) => assignListSlots(Customer, scope, n)))).flatMap((r) => r.slots);
    // Numbers before+1 .. before+48, each exactly once (bucket size 4). Concurrent `$inc`s of the
    // head on FerretDB v1 lose increments and hand a number out twice.
    const tally = (buckets: number[]) => [...buckets.reduce((m, b) => m.set(b, (m.get(b) ?? 0) + 1), new Map<number, number>())].sort((x, y) => x[0] - y[0]);
    const expected = Array.from({ length: 48 }, (_, i) => Math.floor((before + i) / 4));
    expect(tally(slots.map((s) => s.list_bucket))).toEqual(tally(expected));
    expect(await listSlotsHandedOut(Customer, scope)).toBe(before + 48);
  });

  it('counts a create whose bucket the head moved past while it was written', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('customers', a.account_id);
    const scope = { accountId: a.account_id, sandbox: null };
    const key = `customers|${a.account_id}|`;
    const customer = (i: number, slot: ListSlot) => ({
      _id: newId(ID_PREFIX.customer), account_id: a.account_id, sandbox: null, email: `late${i}@example.com`, first_name: null, last_name: null,
      created_at: new Date(Date.now() + i), updated_at: new Date(Date.now() + i), ...slot,
    });
    // A slot taken in the newest bucket, its insert slow: meanwhile 9 more creates move the head two buckets on.
    const late = await assignListSlots(Customer, scope, 1);
    const others = await assignListSlots(Customer, scope, 9);
    const written = others.slots.map((slot, i) => customer(i + 1, slot));
    await Customer.collection.insertMany(written as never[]);
    await recountListSlots(Customer, [...written, ...others.sealed]);
    const head = await ListCounter.findById(`h|${key}`).lean<{ counted_through: number }>();
    expect(head!.counted_through).toBeGreaterThanOrEqual(late.slots[0].list_bucket);
    // The late insert lands after its bucket's count was kept without it, and keeps it right itself.
    const lateDoc = customer(0, late.slots[0]);
    await Customer.collection.insertOne(lateDoc as never);
    await recountListSlots(Customer, [lateDoc]);
    expect(await listedTotal(Customer, scope)).toBe(10);
    const kept = (await bucketCounts(key)).find((c) => c.bucket === late.slots[0].list_bucket);
    expect(kept?.count).toBe(await Customer.countDocuments({ list_scope: late.slots[0].list_scope, list_bucket: late.slots[0].list_bucket }));
    expect((await a.api.get('/v1/customers')).body.pagination.count).toBe(10);
  });

  it('keeps a list started before kept counts right as its head starts keeping them', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('products', a.account_id);
    const key = `products|${a.account_id}|`;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.unshift((await a.api.post('/v1/products', { name: `p${i}` })).body.id);
    // As an earlier version left it: no mark on the head, every bucket counted.
    await ListCounter.updateOne({ _id: `h|${key}` }, { $unset: { counted_through: 1, key: 1 } });
    await ListCounter.updateOne({ _id: `b|${key}|1` }, { $set: { key, bucket: 1, count: 2 } }, { upsert: true });
    await expectPages(a.api, '/v1/products', 'products', ids);
    for (let i = 6; i < 14; i++) ids.unshift((await a.api.post('/v1/products', { name: `p${i}` })).body.id);
    expect((await ListCounter.findById(`h|${key}`).lean<{ counted_through: number }>())!.counted_through).toBe(2);
    await expectPages(a.api, '/v1/products', 'products', ids);
    expect((await bucketCounts(key)).map((c) => [c.bucket, c.count])).toEqual([[0, 4], [1, 4], [2, 4]]);
  });

  it('backfills documents written before buckets, after the bucketed ones, once', async () => {
    const a = await newAccount(api.url);
    await bucketsOf4('customers', a.account_id);
    const recent: string[] = [];
    for (let i = 0; i < 5; i++) recent.unshift((await a.api.post('/v1/customers', { email: `new${i}@example.com` })).body.id);
    // 30 customers as an older version wrote them: no list fields, created earlier.
    const base = Date.now() - 3_600_000;
    const old = Array.from({ length: 30 }, (_, i) => ({
      _id: newId(ID_PREFIX.customer),
      account_id: a.account_id,
      sandbox: null,
      email: `old${i}@example.com`,
      first_name: null,
      last_name: null,
      created_at: new Date(base + (i % 3 === 0 ? i : i - 1) * 1000),
      updated_at: new Date(base),
    }));
    await Customer.collection.insertMany(old as never[]);
    const oldNewestFirst = [...old].sort((x, y) => y.created_at.getTime() - x.created_at.getTime() || (x._id < y._id ? 1 : -1)).map((d) => d._id);
    expect((await a.api.get('/v1/customers')).body.pagination.count).toBe(5);

    expect(await backfillListSlots([Customer])).toBe(30);
    const expected = [...recent, ...oldNewestFirst];
    await expectPages(a.api, '/v1/customers', 'customers', expected);

    // Idempotent: the migration's record skips the collection; without it, nothing is missing a slot.
    expect(await Migration.findById(listSlotsMigration(Customer)).lean()).toMatchObject({ changed: 30 });
    expect(await backfillListSlots([Customer])).toBe(0);
    await Migration.deleteOne({ _id: listSlotsMigration(Customer) });
    expect(await backfillListSlots([Customer])).toBe(0);
    expect(await Migration.findById(listSlotsMigration(Customer)).lean()).toMatchObject({ changed: 0 });
    await expectPages(a.api, '/v1/customers', 'customers', expected);

    // New customers still list first; deleting a backfilled one is counted.
    expected.unshift((await a.api.post('/v1/customers', { email: 'newest@example.com' })).body.id);
    expect((await a.api.del(`/v1/customers/${oldNewestFirst[3]}`)).status).toBe(204);
    await expectPages(a.api, '/v1/customers', 'customers', expected.filter((id) => id !== oldNewestFirst[3]));
  });

  it('takes a collection the backfill finished before it was a migration (its list_counters marker) as done', async () => {
    await Migration.deleteOne({ _id: listSlotsMigration(Product) });
    await ListCounter.updateOne({ _id: 'backfill|products' }, { $set: { count: 0 } }, { upsert: true });
    const a = await newAccount(api.url);
    // Written as an older version would, after that backfill: left alone, as the marker says done.
    await Product.collection.insertOne({ _id: newId(ID_PREFIX.product), account_id: a.account_id, sandbox: null, name: 'old', created_at: new Date(), updated_at: new Date() } as never);
    expect(await backfillListSlots([Product])).toBe(0);
    expect(await Migration.findById(listSlotsMigration(Product)).lean()).toMatchObject({ changed: 0 });
    await ListCounter.deleteOne({ _id: 'backfill|products' });
    expect(await backfillListSlots([Product])).toBe(0);
  });
});
