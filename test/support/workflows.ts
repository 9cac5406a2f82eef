/** Runs the real worker (all workflows, all activities) against a time-skipping environment. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bundleWorkflowCode, Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { createActivities } from '../../src/activities';
import type { Dependencies } from '../../src/dependencies';
import { testDependencies } from './dependencies';

export const workflowsPath = require.resolve('../../src/workflows');

let bundle: Promise<WorkflowBundleWithSourceMap> | null = null;
/** Bundled once per test file: a Worker cannot be restarted, so each test makes its own. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as any });
  return bundle;
}

/** The worker's activities start workflows on `env` (task queue `taskQueue`); `deps` replaces some of their dependencies (the price oracle, say). */
export async function createTestWorker(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  configEnv: Record<string, string> = {},
  activityOverrides: object = {},
  deps: Partial<Dependencies> = {},
) {
  const activityDeps = testDependencies({ env: configEnv, temporal: { client: env.client, taskQueue }, ...deps });
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: { ...createActivities(activityDeps), ...activityOverrides },
  });
}

/** Kept histories (fixtures): committed, read-only, each listed in `manifest.json` with its SHA-256. */
export const historiesDir = join(__dirname, '..', 'workflows', 'histories');
export const historiesManifestFile = join(historiesDir, 'manifest.json');
/** Where a test run writes its own histories (never the fixtures): `test-artifacts/histories`, or `$TEST_ARTIFACTS_DIR/histories`. */
export const recordedHistoriesDir = join(process.env.TEST_ARTIFACTS_DIR ?? join(__dirname, '..', '..', 'test-artifacts'), 'histories');

const History = temporal.api.history.v1.History;

export interface HistoryFixture {
  sha256: string;
  /** The workflow type in the first event. */
  workflowType: string;
  /** The patch ids its `core_patch` markers record. */
  patches: string[];
  /** The ids of the `patched()` calls it was recorded before (without their marker): it shows runs started then still replay. */
  predates: string[];
  /** The commit that added it. */
  addedIn?: string;
  note?: string;
}

/** File name -> entry. */
export function historiesManifest(): Record<string, HistoryFixture> {
  return JSON.parse(readFileSync(historiesManifestFile, 'utf8')).fixtures;
}

export function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** A kept history file: protobuf binary (`.history.pb`) or the JSON of the proto message (`.json`). */
export function decodeHistoryFile(file: string): temporal.api.history.v1.History {
  // fromObject reverses JSON.stringify of the proto message (historyFromJSON trips over Jest's module registry).
  return file.endsWith('.json') ? History.fromObject(JSON.parse(readFileSync(file, 'utf8'))) : History.decode(readFileSync(file));
}

/** The patch ids in a history's `core_patch` markers, in order. */
export function patchMarkersOf(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? [])
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m) => m?.markerName === 'core_patch')
    .flatMap((m) => Object.values(m!.details ?? {}).flatMap((p) => p.payloads ?? []))
    .map((p) => JSON.parse(Buffer.from(p.data ?? []).toString('utf8')).id as string);
}

/**
 * A kept history of earlier workflow code (test/workflows/histories/<name>.history.pb or .json),
 * for a replay showing runs started then still replay. Read-only: throws when it is missing, not
 * in manifest.json, or not the bytes whose checksum the manifest lists. Nothing writes these files.
 */
export function fixtureHistory(name: string): temporal.api.history.v1.History {
  const manifest = historiesManifest();
  const fileName = [`${name}.history.pb`, `${name}.json`].find((f) => manifest[f]);
  if (!fileName) throw new Error(`No kept history ${name} in ${historiesManifestFile}`);
  const file = join(historiesDir, fileName);
  if (!existsSync(file)) throw new Error(`Kept history ${file} is missing (listed in manifest.json): restore it, it cannot be recorded again by today's code`);
  const sha256 = sha256Of(file);
  if (sha256 !== manifest[fileName].sha256) throw new Error(`Kept history ${file} changed: sha256 ${sha256}, manifest.json lists ${manifest[fileName].sha256}`);
  return decodeHistoryFile(file);
}

/**
 * Writes this run's history to recordedHistoriesDir/<name>.history.pb (a file of its own, never a
 * kept one) and returns it, for a replay against the code that made it. To keep one as a fixture
 * (say before a `patched()` change), copy it into test/workflows/histories under a new name and
 * list it in manifest.json (histories.test.ts prints the entry). Stored as protobuf binary: the JSON
 * form's converter trips over Jest's module registry.
 */
export function recordHistory(name: string, history: temporal.api.history.v1.IHistory): temporal.api.history.v1.IHistory {
  if (resolve(recordedHistoriesDir) === resolve(historiesDir)) throw new Error('Recorded histories are not written among the kept ones');
  if (Object.keys(historiesManifest()).some((f) => f === `${name}.history.pb` || f === `${name}.json`)) {
    throw new Error(`${name} is a kept history's name: a recorded one takes a name of its own`);
  }
  mkdirSync(recordedHistoriesDir, { recursive: true });
  const bytes = History.encode(history).finish();
  writeFileSync(join(recordedHistoriesDir, `${name}.history.pb`), bytes);
  return History.decode(bytes);
}

/** Replays a history against today's workflow code: a non-deterministic change fails here. */
export async function replay(history: temporal.api.history.v1.IHistory, workflowId: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history as any, workflowId);
}
