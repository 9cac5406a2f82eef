/** What every fault scenario is given and what it reports. */
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { connectDatabase, disconnectDatabase } from '../src/db/connection';
import { createAccount } from '../src/services/accounts';
import { appProcesses, ManagedProcess, Runtime } from './stack';
import { apiClient, ApiClient } from './client';

export interface ScenarioContext {
  /** A MongoDB-wire server URL without a database name; each scenario uses a database of its own. */
  mongoServerUrl: string;
  temporalAddress: string;
  /** Logs of the processes the scenario starts. */
  runDir: string;
  /** Progress lines (stderr). */
  progress: (line: string) => void;
  /** What runs the API and the worker: node (the default) or deno. */
  runtime?: Runtime;
}

export interface ScenarioResult {
  name: string;
  operations: number;
  lost: number;
  doubled: number;
  recoveredSeconds: number;
  /** What was found, one line each (printed under the summary line). */
  details: string[];
  /**
   * How much work the fault caught in progress, for the scenarios that must prove they hit some
   * (renewals: invoices not yet made at the kill; drain: requests in flight at SIGTERM;
   * allocations: transactions not yet allocated when the worker died; database-kill: requests
   * sent while FerretDB was down). 0 fails the scenario: a fault that hit nothing in progress
   * proved nothing.
   */
  inProgressAtFault?: number;
}

/** Why a scenario's result fails it (empty: it passed). */
export function failures(r: ScenarioResult): string[] {
  const out: string[] = [];
  if (r.lost) out.push(`${r.lost} lost`);
  if (r.doubled) out.push(`${r.doubled} doubled`);
  if (r.inProgressAtFault === 0) out.push('the fault hit no work in progress');
  return out;
}

/** `fault <name>: <n> operations, <lost> lost, <doubled> doubled, recovered in <s> s` */
export function summaryLine(r: ScenarioResult): string {
  return `fault ${r.name}: ${r.operations} operations, ${r.lost} lost, ${r.doubled} doubled, recovered in ${r.recoveredSeconds.toFixed(1)} s`;
}

export interface ScenarioApp {
  api: ManagedProcess;
  worker: ManagedProcess;
  apiUrl: string;
  client: ApiClient;
  accountId: string;
  token: string;
  /** The account's sign-in (POST /v1/auth). */
  email: string;
  password: string;
  /** Stops the processes, drops the database, disconnects. */
  close: () => Promise<void>;
}

/**
 * An API and a worker of their own (own database, own task queue), a fresh account made the way
 * the CLI makes it, and this process connected to the same database to check invariants. The
 * processes run on Node unless `ctx.runtime` says deno.
 */
export async function startScenarioApp(ctx: ScenarioContext, name: string, extraEnv: Record<string, string> = {}): Promise<ScenarioApp> {
  const suffix = `${name}_${randomBytes(4).toString('hex')}`;
  const mongodbUri = `${ctx.mongoServerUrl}/faults_${suffix}`;
  const taskQueue = `faults-${suffix}`;
  const { api, worker, apiUrl } = await appProcesses({ runtime: ctx.runtime, mongodbUri, temporalAddress: ctx.temporalAddress, taskQueue, runDir: ctx.runDir, extraEnv });
  await connectDatabase(mongodbUri);
  try {
    await worker.start();
    await api.start();
  } catch (err) {
    // A part that did not come up must not leave the other running past the test.
    await Promise.all([api.stop('SIGKILL'), worker.stop('SIGKILL')]);
    await disconnectDatabase();
    throw err;
  }
  const email = `faults-${suffix}@example.com`;
  const password = 'a-long-password';
  const account = await createAccount({ email, password });
  const client = apiClient(() => apiUrl, account.token);
  return {
    api,
    worker,
    apiUrl,
    client,
    accountId: account.account_id,
    token: account.token,
    email,
    password,
    close: async () => {
      await Promise.all([api.stop('SIGTERM'), worker.stop('SIGTERM')]);
      await mongoose.connection.db?.dropDatabase().catch(() => undefined);
      await disconnectDatabase();
    },
  };
}

export const seconds = (fromMs: number) => (Date.now() - fromMs) / 1000;
