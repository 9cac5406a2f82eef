/**
 * scripts/ferretdb-gin.sql on the run's PostgreSQL: every btree index FerretDB makes gets a GIN
 * companion serving its `@>` filters, and a btree that is not unique (read by none of FerretDB's
 * queries) is swapped for an empty placeholder of the same name, so writes stop maintaining it
 * while FerretDB's own dropIndexes still finds it. Checked in PostgreSQL's catalog and through the
 * wire (docs/adr/0613-ferretdb-btree-placeholders.md).
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { testDatabaseUri } from '../support/db';
import { waitFor } from '../support/wait';

const psqlPath = process.env.TEST_POSTGRES_PSQL;
const socketDir = process.env.PG_SOCKET_DIR;

/** psql and its arguments for FerretDB's database on the run's PostgreSQL. */
function psqlCommand(args: string[]): [string, string[]] {
  if (!psqlPath || !socketDir) throw new Error('TEST_POSTGRES_PSQL and PG_SOCKET_DIR are not set: run the tests with `npm test` (FerretDB on PostgreSQL)');
  return [psqlPath, ['-X', '-q', '-tA', '-v', 'ON_ERROR_STOP=1', '-h', socketDir, '-U', 'postgres', '-d', 'ferretdb', ...args]];
}

function psql(args: string[]): string {
  return execFileSync(...psqlCommand(args), { encoding: 'utf8' }).trim();
}

/** The PostgreSQL indexes of a collection (schema = database, table = `<collection>_<hash>`): name -> definition. */
function pgIndexes(db: Db, collection: string): Map<string, string> {
  const rows = psql(['-F', '\t', '-c', `SELECT indexrelname, pg_get_indexdef(indexrelid) FROM pg_stat_user_indexes WHERE schemaname = '${db.databaseName}' AND relname LIKE '${collection}\\_%'`]);
  return new Map(rows.split('\n').filter(Boolean).map((line) => line.split('\t') as [string, string]));
}

/** The indexes whose first key is `field`, each reduced to its kind. */
function kinds(indexes: Map<string, string>, field: string): string[] {
  return [...indexes].filter(([, def]) => def.match(/\(\(_jsonb -> '([^']+)'::text\)/)?.[1] === field).map(([name, def]) => {
    if (/USING gin .* jsonb_path_ops/.test(def)) return `gin ${name.endsWith('_gin') ? 'companion' : name}`;
    if (/ WHERE false$/.test(def)) return 'placeholder';
    return /^CREATE UNIQUE INDEX .* USING btree/.test(def) ? 'unique btree' : 'btree';
  }).sort();
}

let client: MongoClient;
let db: Db;
beforeAll(async () => {
  client = await MongoClient.connect(testDatabaseUri());
  db = client.db();
});
afterAll(async () => {
  await db.dropDatabase();
  await client.close();
});

it('keeps unique btrees, swaps the others for placeholders, and filters through the GIN companions', async () => {
  const orders = db.collection<{ _id: string; ref: string; customer: string; state: string }>('orders');
  await orders.createIndex({ ref: 1 }, { unique: true });
  await orders.createIndex({ customer: 1, state: 1 });
  await orders.createIndex({ state: 1 });

  const indexes = pgIndexes(db, 'orders');
  expect(kinds(indexes, 'ref')).toEqual(['gin companion', 'unique btree']);
  expect(kinds(indexes, 'customer')).toEqual(['gin companion', 'placeholder']);
  expect(kinds(indexes, 'state')).toEqual(['gin companion', 'placeholder']);
  // FerretDB still lists every index it made, under its own names.
  expect((await orders.listIndexes().toArray()).map((i) => i.name).sort()).toEqual(['_id_', 'customer_1_state_1', 'ref_1', 'state_1']);

  await orders.insertMany([
    { _id: 'o1', ref: 'r1', customer: 'c1', state: 'open' },
    { _id: 'o2', ref: 'r2', customer: 'c1', state: 'paid' },
    { _id: 'o3', ref: 'r3', customer: 'c2', state: 'open' },
  ]);
  await expect(orders.insertOne({ _id: 'o4', ref: 'r1', customer: 'c3', state: 'open' })).rejects.toMatchObject({ code: 11000 });
  expect((await orders.find({ customer: 'c1', state: 'open' }).toArray()).map((o) => o._id)).toEqual(['o1']);
  await orders.updateOne({ _id: 'o1' }, { $set: { state: 'paid' } });
  expect((await orders.find({ state: 'paid' }).toArray()).map((o) => o._id).sort()).toEqual(['o1', 'o2']);
  const plan = JSON.stringify(await orders.find({ customer: 'c1' }).explain());
  expect(plan).toMatch(/"Index Name":"orders_[0-9a-f]+_customer_[^"]*_gin"/);
});

it("drops a placeholder and its companion with FerretDB's dropIndexes, and makes them again", async () => {
  const items = db.collection<{ _id: string; sku: string }>('items');
  await items.createIndex({ sku: 1 });
  expect(kinds(pgIndexes(db, 'items'), 'sku')).toEqual(['gin companion', 'placeholder']);
  await items.dropIndex('sku_1');
  expect(kinds(pgIndexes(db, 'items'), 'sku')).toEqual([]);
  expect((await items.listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_']);
  await items.createIndex({ sku: 1 });
  expect(kinds(pgIndexes(db, 'items'), 'sku')).toEqual(['gin companion', 'placeholder']);
});

it('converts at start the btrees made while the trigger was not there', async () => {
  const legacy = db.collection<{ _id: string; region: string }>('legacy');
  await legacy.insertOne({ _id: 'l1', region: 'eu' });
  const table = psql(['-c', `SELECT relname FROM pg_stat_user_tables WHERE schemaname = '${db.databaseName}' AND relname LIKE 'legacy\\_%'`]);
  // An index as FerretDB made them before: a full btree, its name ending in _idx, no companion
  // (event triggers do not fire for a session in replica mode).
  psql(['-c', `SET session_replication_role = replica; CREATE INDEX ${table}_region_old_idx ON "${db.databaseName}"."${table}" ((_jsonb -> 'region'))`]);
  expect(kinds(pgIndexes(db, 'legacy'), 'region')).toEqual(['btree']);
  // What every start of the embedded PostgreSQL runs (scripts/lib.sh).
  psql(['-f', join(__dirname, '../../scripts/ferretdb-gin.sql')]);
  expect(kinds(pgIndexes(db, 'legacy'), 'region')).toEqual(['gin companion', 'placeholder']);
  expect(await legacy.countDocuments({ region: 'eu' })).toBe(1);
});

/** A psql session kept open (its statements sent one line at a time), or the whole script run in the background. */
function psqlSession(args: string[] = [], appName = 'ferretdb-gin-test') {
  const child = spawn(...psqlCommand(args), { env: { ...process.env, PGAPPNAME: appName } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, exited, output: () => out };
}

it('finishes at start when an index it listed is dropped before it converts it (a FerretDB already serving)', async () => {
  // A table shaped like a FerretDB collection, with a btree as FerretDB made them before the trigger.
  psql(['-c', `SET client_min_messages = warning; DROP SCHEMA IF EXISTS gin_race CASCADE; CREATE SCHEMA gin_race; CREATE TABLE gin_race.items_1 (_jsonb jsonb); SET session_replication_role = replica; CREATE INDEX items_1_sku_idx ON gin_race.items_1 ((_jsonb -> 'sku'))`]);
  // Another session holds the table while the script runs, then drops it: the script reaches that
  // index after listing it, waits for the table, and finds it gone.
  const holder = psqlSession();
  holder.child.stdin.write(`BEGIN; LOCK TABLE gin_race.items_1 IN ACCESS EXCLUSIVE MODE; SELECT 'held';\n`);
  await waitFor(() => holder.output().includes('held'), 'the lock', 20_000);
  const backfill = psqlSession(['-f', join(__dirname, '../../scripts/ferretdb-gin.sql')], 'ferretdb-gin-backfill');
  await waitFor(() => psql(['-c', `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ferretdb-gin-backfill' AND wait_event_type = 'Lock'`]) === '1', 'the script to wait for the table', 20_000);
  holder.child.stdin.end(`DROP TABLE gin_race.items_1; COMMIT;\n`);
  expect(await holder.exited).toBe(0);
  const code = await backfill.exited;
  expect(backfill.output()).toBe('');
  expect(code).toBe(0);
  expect(psql(['-c', `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'gin_race'`])).toBe('0');
  psql(['-c', 'DROP SCHEMA gin_race']);
});
