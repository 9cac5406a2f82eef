/** Runs the real worker (all workflows, all activities) against a time-skipping environment. */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
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

const historiesDir = join(__dirname, '..', 'workflows', 'histories');

const History = temporal.api.history.v1.History;

/**
 * Keeps a recorded history in test/workflows/histories (written when missing or when
 * UPDATE_HISTORIES=1) and returns the committed one, for replay tests. Stored as protobuf
 * binary: the JSON form's converter trips over Jest's module registry.
 */
export function keepHistory(name: string, history: temporal.api.history.v1.IHistory): temporal.api.history.v1.IHistory {
  const file = join(historiesDir, `${name}.history.pb`);
  if (!existsSync(file) || process.env.UPDATE_HISTORIES === '1') writeFileSync(file, History.encode(history).finish());
  return History.decode(readFileSync(file));
}

/** Replays a history against today's workflow code: a non-deterministic change fails here. */
export async function replay(history: temporal.api.history.v1.IHistory, workflowId: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history as any, workflowId);
}
