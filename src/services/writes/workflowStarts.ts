/**
 * The workflow-start outbox: a write that needs a workflow keeps answering 2xx while Temporal is
 * down, and the workflow is started once it is back (the same design as webhook dispatch, with
 * its `dispatched` events and sweeper).
 *
 * A service records an intent (`workflow_starts`: workflow id, type, arguments, task queue, and
 * the signal of a signal-with-start) before or right after its write, then tries the start at
 * once with a short deadline. Started: the intent is marked `started`. Not started (Temporal
 * unreachable, slow, or failing): logged, and the request answers as if it had been; the
 * sweeper, a loop in every process that starts the domains (API and worker), starts intents not
 * started after a few seconds.
 *
 * Repeating a start is harmless: workflow ids derive from what they own and `startOnce` treats
 * "already started" as done; a signal-with-start repeated sends its signal again, so every
 * signal sent through here must be idempotent in its workflow (the allocation workflow's
 * transaction ids are allocated at most once; a due date re-sent re-arms the same timer).
 * One outbox per process (`createWorkflowStarts`, built with the process's dependencies): it holds
 * the process's pause after an outage, shared by its requests and its sweeper.
 */
import { runPeriodically } from '../../lib/periodic';
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import type { Logger } from 'pino';
import type { Workflow } from '@temporalio/common';
import { WorkflowStart } from '../../models/workflowStart';
import { upsertAgainOnDuplicate } from '../../models/errors';
import type { TemporalContext } from '../../temporal/context';
import { startOnce } from '../../temporal/startOnce';

/** A start against an unreachable server gives up within this (as webhook dispatch does). */
export const START_DEADLINE_MS = 5_000;
/**
 * After a start found Temporal unreachable, requests leave their starts to the sweeper for this
 * long (or until a sweep succeeds) instead of each waiting out the deadline.
 */
const PAUSE_AFTER_OUTAGE_MS = 15_000;
/** An intent recorded ahead of its document, which never appeared (the write failed): dropped after this. */
const RESOURCE_WAIT_MS = 60_000;
/** A start refused for another reason than an outage is retried with backoff up to this. */
const MAX_BACKOFF_MS = 5 * 60_000;

export interface WorkflowStartRequest<A extends unknown[] = unknown[]> {
  workflowId: string;
  workflowType: string;
  args: A;
  /** For a signal-with-start: the signal sent with the start (or to the running workflow). */
  signal?: { name: string; args: unknown[] };
  /**
   * The document the workflow is about, when the intent is recorded before that document is
   * written: the sweeper starts nothing until it exists, and drops the intent if it never does.
   */
  resource?: { collection: string; id: string };
  /**
   * Intents with the same key replace each other, so the latest wins (a due date moved twice
   * while Temporal was down sends only the last one). Default: the workflow id, plus the signal
   * and its arguments for a signal-with-start (so two transactions signalled to one allocation
   * workflow are two intents).
   */
  key?: string;
  /**
   * The workflow's first task waits until then (Temporal's start delay): a workflow that only
   * waits for a date costs no workflow task and no worker cache slot before it. Not for a
   * signal-with-start, whose signal runs the workflow at once.
   */
  firstTaskAt?: Date;
}

/** A recorded intent: `start()` tries it now; it never throws for Temporal's sake. */
export interface PendingStart {
  start(): Promise<void>;
}

/** A start recorded nowhere and never made: what a process without Temporal plans. */
export const NO_START: PendingStart = { start: async () => undefined };

/**
 * How a process's services start workflows. `outbox`: through an intent (the API: a request
 * answers while Temporal is down). `direct`: the start itself, which throws when it fails (the
 * worker, whose starts all come from activities: a failed start fails the activity and Temporal
 * retries it, so the intent's two writes would only repeat what the retry already guarantees).
 */
export type WorkflowStartMode = 'outbox' | 'direct';

/** The outbox of one process: its Temporal client and logger, and its pause after an outage. */
export interface WorkflowStarts {
  readonly temporal: TemporalContext;
  readonly logger: Logger;
  readonly mode: WorkflowStartMode;
  /** Live starts are skipped (left to the sweeper) until then, after one found Temporal unreachable. */
  pausedUntil: number;
  /** When the last start succeeded: a start sent before that which fails late (it waited out its deadline across a restart) is no news of an outage. */
  lastStartedAt: number;
}

export function createWorkflowStarts(temporal: TemporalContext, logger: Logger, mode: WorkflowStartMode = 'outbox'): WorkflowStarts {
  return { temporal, logger, mode, pausedUntil: 0, lastStartedAt: 0 };
}

/** A start sent at `sentAt` found Temporal unreachable: pause, unless one sent since got through. */
function pauseAfterOutage(outbox: WorkflowStarts, sentAt: number): void {
  if (sentAt >= outbox.lastStartedAt) outbox.pausedUntil = Date.now() + PAUSE_AFTER_OUTAGE_MS;
}

/** A start got through: Temporal answers, so requests stop leaving their starts to the sweeper. */
function startedNow(outbox: WorkflowStarts): void {
  outbox.lastStartedAt = Date.now();
  outbox.pausedUntil = 0;
}

function intentKey(req: WorkflowStartRequest): string {
  if (req.key) return req.key;
  return req.signal ? `${req.workflowId}:${req.signal.name}:${JSON.stringify(req.signal.args)}` : req.workflowId;
}

/** What an intent document holds (and what a start needs). */
interface Intent {
  _id: string;
  workflow_id: string;
  workflow_type: string;
  task_queue: string;
  args: unknown[];
  signal: string | null;
  signal_args: unknown[] | null;
  resource_collection: string | null;
  resource_id: string | null;
  first_task_at: Date | null;
  nonce: string;
  started: boolean;
  started_at: Date | null;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  created_at: Date;
}

/** Only the recording an actor read is marked or dropped: a newer one with the same key stays. */
const recording = (intent: Pick<Intent, '_id' | 'nonce'>) => ({ _id: intent._id, nonce: intent.nonce }) as never;

/** gRPC UNAVAILABLE or DEADLINE_EXCEEDED anywhere in the cause chain: the server could not be reached in time. */
export function isTemporalUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.code === 14 || e.code === 4) return true;
    if (typeof e.message === 'string' && /\b(UNAVAILABLE|DEADLINE_EXCEEDED|Deadline exceeded)\b/.test(e.message)) return true;
  }
  return false;
}

/** One try of the start (or signal-with-start), bounded by START_DEADLINE_MS. */
async function startNow(temporal: TemporalContext, intent: Intent): Promise<void> {
  const { client } = temporal;
  const options = { workflowId: intent.workflow_id, taskQueue: intent.task_queue, args: intent.args };
  // Measured when the start is sent, so an intent the sweeper sends late still wakes on time.
  const startDelay = intent.first_task_at ? new Date(intent.first_task_at).getTime() - Date.now() : 0;
  await client.withDeadline(Date.now() + START_DEADLINE_MS, async () => {
    if (intent.signal) {
      await client.workflow.signalWithStart<Workflow, unknown[]>(intent.workflow_type, { ...options, signal: intent.signal, signalArgs: intent.signal_args ?? [] });
    } else {
      await startOnce(() => client.workflow.start<Workflow>(intent.workflow_type, startDelay > 0 ? { ...options, startDelay } : options));
    }
  });
}

async function markStarted(intent: Intent): Promise<void> {
  await WorkflowStart.collection.updateOne(recording(intent), { $set: { started: true, started_at: new Date() } });
}

/**
 * Records the intent to start a workflow (call it before the write it belongs to, with
 * `resource`, or right after); `start()` on the result tries it at once. Throws only when the
 * intent cannot be written (the database failed: so does the request). In `direct` mode nothing
 * is recorded and `start()` makes the start, throwing when it fails.
 */
function intentOf(outbox: WorkflowStarts, req: WorkflowStartRequest): Intent {
  const now = new Date();
  return {
    _id: intentKey(req),
    workflow_id: req.workflowId,
    workflow_type: req.workflowType,
    task_queue: outbox.temporal.taskQueue,
    args: req.args,
    signal: req.signal?.name ?? null,
    signal_args: req.signal?.args ?? null,
    resource_collection: req.resource?.collection ?? null,
    resource_id: req.resource?.id ?? null,
    first_task_at: req.signal ? null : (req.firstTaskAt ?? null),
    nonce: randomBytes(8).toString('hex'),
    started: false,
    started_at: null,
    attempts: 0,
    last_error: null,
    next_attempt_at: now,
    created_at: now,
  };
}

export async function recordWorkflowStart<A extends unknown[]>(outbox: WorkflowStarts, req: WorkflowStartRequest<A>): Promise<PendingStart> {
  const { temporal } = outbox;
  const intent = intentOf(outbox, req);
  if (outbox.mode === 'direct') return { start: () => startNow(temporal, intent) };
  // By the driver: the intent is stored exactly as built (no casting of the arguments).
  await upsertAgainOnDuplicate(() => WorkflowStart.collection.replaceOne({ _id: intent._id } as never, intent as never, { upsert: true }));
  return { start: () => tryStart(outbox, intent) };
}

/**
 * A start whose intent is kept by the resource itself (a crypto transaction waiting for its
 * allocation is `allocation_due`, and a sweeper of its own sends what was not sent): tried at
 * once, with the outbox's pause after an outage; in `outbox` mode a failure is logged and left
 * to that sweeper, in `direct` mode it throws. True when it went through.
 */
export async function startWithoutIntent<A extends unknown[]>(outbox: WorkflowStarts, req: WorkflowStartRequest<A>, opts: { throwOnFailure?: boolean } = {}): Promise<boolean> {
  const intent = intentOf(outbox, req);
  if (outbox.mode === 'outbox' && !opts.throwOnFailure) return sendLive(outbox, intent);
  await sendNow(outbox, intent);
  return true;
}

/** Records the intent and tries it at once: the one call for a start that follows its write. */
export async function requestWorkflowStart<A extends unknown[]>(outbox: WorkflowStarts, req: WorkflowStartRequest<A>): Promise<void> {
  await (await recordWorkflowStart(outbox, req)).start();
}

/** One start now; its outcome sets or clears the process's pause after an outage. Throws when it fails. */
async function sendNow(outbox: WorkflowStarts, intent: Intent): Promise<void> {
  const sentAt = Date.now();
  try {
    await startNow(outbox.temporal, intent);
  } catch (err) {
    if (isTemporalUnavailable(err)) pauseAfterOutage(outbox, sentAt);
    throw err;
  }
  startedNow(outbox);
}

/** One live try, skipped during the pause after an outage; a failure is logged (a sweeper sends it later). */
async function sendLive(outbox: WorkflowStarts, intent: Intent): Promise<boolean> {
  // Temporal was found unreachable a moment ago: the request does not wait out another deadline.
  if (Date.now() < outbox.pausedUntil) return false;
  try {
    await sendNow(outbox, intent);
    return true;
  } catch (err) {
    outbox.logger.warn({ err, workflowId: intent.workflow_id, workflowType: intent.workflow_type }, 'workflow start failed; the sweeper will retry');
    return false;
  }
}

async function tryStart(outbox: WorkflowStarts, intent: Intent): Promise<void> {
  if (!(await sendLive(outbox, intent))) return;
  // Not marked (a database hiccup): the sweeper starts it again, which is harmless.
  await markStarted(intent).catch((err) => outbox.logger.warn({ err, workflowId: intent.workflow_id }, 'workflow started, but its intent was not marked'));
}

async function resourceExists(intent: Intent): Promise<boolean> {
  if (!intent.resource_collection || !intent.resource_id) return true;
  const found = await mongoose.connection
    .collection(intent.resource_collection)
    .findOne({ _id: intent.resource_id } as never, { projection: { _id: 1 } });
  return found !== null;
}

export interface WorkflowStartSweepOptions {
  /** Intents younger than this are left to the request that recorded them. */
  minAgeMs: number;
  batch: number;
}

/**
 * One pass: intents not started, due, oldest first. Stops at the first start that finds
 * Temporal unreachable (the rest would wait out the same deadline); an intent refused for
 * another reason backs off (1 s, doubling, at most 5 minutes) so it cannot hold up the others.
 */
export async function sweepWorkflowStarts(outbox: WorkflowStarts, opts: WorkflowStartSweepOptions): Promise<number> {
  const { logger: log } = outbox;
  const now = Date.now();
  // `started: false` is what FerretDB pushes down (to its index); the date is compared after.
  const due = await WorkflowStart.find({ started: false, next_attempt_at: { $lte: new Date(now - opts.minAgeMs) } })
    .sort({ created_at: 1 })
    .limit(opts.batch)
    .lean<Intent[]>();
  let done = 0;
  for (const intent of due) {
    if (!(await resourceExists(intent))) {
      if (now - new Date(intent.created_at).getTime() > RESOURCE_WAIT_MS) await WorkflowStart.collection.deleteOne(recording(intent));
      continue;
    }
    try {
      await sendNow(outbox, intent);
    } catch (err) {
      const outage = isTemporalUnavailable(err);
      const backoff = Math.min(1_000 * 2 ** Math.min(intent.attempts ?? 0, 20), MAX_BACKOFF_MS);
      await WorkflowStart.collection.updateOne(recording(intent), {
        $set: { attempts: (intent.attempts ?? 0) + 1, last_error: String(err).slice(0, 500), ...(outage ? {} : { next_attempt_at: new Date(Date.now() + backoff) }) },
      });
      if (outage) throw err;
      log.warn({ err, workflowId: intent.workflow_id, attempts: (intent.attempts ?? 0) + 1 }, 'workflow start refused; retrying later');
      continue;
    }
    await markStarted(intent);
    done += 1;
  }
  return done;
}

/** Started intents are kept this long (to tell when a start happened), then purged by the sweeper. */
const KEEP_STARTED_MS = 60 * 60_000;

export async function purgeStartedWorkflowStarts(olderThanMs = KEEP_STARTED_MS): Promise<number> {
  const res = await WorkflowStart.deleteMany({ started: true, started_at: { $lt: new Date(Date.now() - olderThanMs) } });
  return res.deletedCount ?? 0;
}

export interface WorkflowStartSweeperOptions extends WorkflowStartSweepOptions {
  intervalMs: number;
  /** How often started intents past KEEP_STARTED_MS are purged. */
  purgeEveryMs: number;
}

/**
 * The sweeper loop, in every process that starts the domains (API and worker); any number may
 * run at once (starts are idempotent). Returns a stop function that waits for the current pass.
 */
export function startWorkflowStartSweeper(outbox: WorkflowStarts, opts: WorkflowStartSweeperOptions): () => Promise<void> {
  const { logger } = outbox;
  let lastPurge = Date.now();
  return runPeriodically(async () => {
    try {
      await sweepWorkflowStarts(outbox, opts);
    } catch (err) {
      logger.warn({ err }, 'workflow start sweeper pass failed; will retry');
    }
    if (Date.now() - lastPurge >= opts.purgeEveryMs) {
      lastPurge = Date.now();
      await purgeStartedWorkflowStarts().catch((err) => logger.warn({ err }, 'purge of started workflow intents failed'));
    }
  }, opts.intervalMs);
}
