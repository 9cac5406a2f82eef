/** What every fault scenario is given and what it reports. */
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { connectDatabase, disconnectDatabase } from '../src/db/connection';
import { createAccount } from '../src/services/accounts/accounts';
import { appProcessSet, ManagedProcess, Runtime } from './stack';
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
  /** More environment for the API and the worker: the Temporal client settings (TLS) of the cluster scenarios. */
  temporalEnv?: Record<string, string>;
  /** How many API and worker processes each scenario runs (1 and 1 unless said). */
  apis?: number;
  workers?: number;
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
  /** The first API and the first worker (of `apis`, `workers`). */
  api: ManagedProcess;
  worker: ManagedProcess;
  apis: ManagedProcess[];
  workers: ManagedProcess[];
  /** With more than one API, each read gives the next one's URL (round robin, as a balancer). */
  apiUrl: string;
  apiUrls: string[];
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
 * processes run on Node unless `ctx.runtime` says deno; `ctx.apis` and `ctx.workers` run more of
 * each (the client then sends each attempt to the next API in turn, as a balancer would).
 */
export async function startScenarioApp(ctx: ScenarioContext, name: string, extraEnv: Record<string, string> = {}): Promise<ScenarioApp> {
  const suffix = `${name}_${randomBytes(4).toString('hex')}`;
  const mongodbUri = `${ctx.mongoServerUrl}/faults_${suffix}`;
  const taskQueue = `faults-${suffix}`;
  const { apis, workers, apiUrls } = await appProcessSet(
    { runtime: ctx.runtime, mongodbUri, temporalAddress: ctx.temporalAddress, taskQueue, runDir: ctx.runDir, extraEnv: { ...ctx.temporalEnv, ...extraEnv } },
    { apis: ctx.apis ?? 1, workers: ctx.workers ?? 1 },
  );
  const all = [...workers, ...apis];
  await connectDatabase(mongodbUri);
  try {
    for (const w of workers) await w.start();
    for (const a of apis) await a.start();
  } catch (err) {
    // A part that did not come up must not leave the other running past the test.
    await Promise.all(all.map((p) => p.stop('SIGKILL')));
    await disconnectDatabase();
    throw err;
  }
  let turn = 0;
  const nextUrl = () => apiUrls[turn++ % apiUrls.length];
  const email = `faults-${suffix}@example.com`;
  const password = 'a-long-password';
  const account = await createAccount({ email, password });
  const client = apiClient(nextUrl, account.token);
  return {
    api: apis[0],
    worker: workers[0],
    apis,
    workers,
    get apiUrl() {
      return nextUrl();
    },
    apiUrls,
    client,
    accountId: account.account_id,
    token: account.token,
    email,
    password,
    close: async () => {
      await Promise.all(all.map((p) => p.stop('SIGTERM')));
      await mongoose.connection.db?.dropDatabase().catch(() => undefined);
      await disconnectDatabase();
    },
  };
}

export const seconds = (fromMs: number) => (Date.now() - fromMs) / 1000;
