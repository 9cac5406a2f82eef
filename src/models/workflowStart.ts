import { Schema, model, InferSchemaType } from 'mongoose';

/**
 * The workflow-start outbox (services/writes/workflowStarts.ts): one document per workflow start (or
 * signal-with-start) a service asked for. `started` false means Temporal has not confirmed it
 * yet; the sweeper filters on that boolean, which FerretDB pushes down to its index (like
 * `events.dispatched`). Started ones are kept a day, then purged by the sweeper.
 */
const workflowStartSchema = new Schema(
  {
    /** The workflow id, or workflow id + signal for a signal-with-start (see `intentKey`). */
    _id: { type: String, required: true },
    workflow_id: { type: String, required: true },
    workflow_type: { type: String, required: true },
    task_queue: { type: String, required: true },
    args: { type: [Schema.Types.Mixed], default: [] },
    signal: { type: String, default: null },
    signal_args: { type: [Schema.Types.Mixed], default: null },
    /** When the intent is recorded before its document is written: nothing starts until it exists. */
    resource_collection: { type: String, default: null },
    resource_id: { type: String, default: null },
    /** The workflow's first task is delayed until then (a start, not a signal-with-start). */
    first_task_at: { type: Date, default: null },
    /** Which recording this is: only its own recorder (or a sweeper that read it) marks it started. */
    nonce: { type: String, required: true },
    started: { type: Boolean, default: false },
    started_at: { type: Date, default: null },
    attempts: { type: Number, default: 0 },
    last_error: { type: String, default: null },
    /** The sweeper leaves it alone until then (a start that failed for another reason than an outage backs off). */
    next_attempt_at: { type: Date, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
workflowStartSchema.index({ started: 1, created_at: 1 });

export type WorkflowStartDoc = InferSchemaType<typeof workflowStartSchema> & { _id: string };
export const WorkflowStart = model('WorkflowStart', workflowStartSchema, 'workflow_starts');
