import { Schema, model } from 'mongoose';

/** The reports kept as rollups (for receivables, the overview's totals; the report's lists are read live). */
export const ROLLUP_KINDS = ['mrr', 'collections', 'receivables'] as const;
export type RollupKind = (typeof ROLLUP_KINDS)[number];

/**
 * One rollup's state per kind, account and scope; `_id` `<kind>|<account>|<sandbox or ''>`,
 * read and written by `_id` only (FerretDB never pushes `sandbox: null` down):
 * - `built_gen`: the mark's `dirty_gen` (ReportRollupMark) read before the source was read for the
 *   current build;
 * - `build`, `parts`: the current build's id and how many part documents it has;
 * - `dirty_gen`: where earlier versions kept the mark (read when no mark document exists yet).
 * The rollup is current when `built_gen` equals the mark's `dirty_gen`; otherwise reports compute live.
 */
const reportRollupStateSchema = new Schema(
  {
    _id: { type: String, required: true },
    account_id: { type: String, required: true },
    sandbox: { type: String, default: null },
    kind: { type: String, required: true },
    dirty_gen: { type: String, default: '' },
    built_gen: { type: String, default: '' },
    build: { type: String, default: '' },
    parts: { type: Number, default: 0 },
    built_at: { type: Date, default: null },
  },
  { versionKey: false },
);

export interface ReportRollupStateDoc {
  _id: string;
  account_id: string;
  sandbox: string | null;
  kind: RollupKind;
  dirty_gen: string;
  built_gen: string;
  /** `''`: none yet. */
  build: string;
  parts: number;
  built_at: Date | null;
}
export const ReportRollupState = model('ReportRollupState', reportRollupStateSchema, 'report_rollup_states');

/**
 * A rollup's mark, `_id` as its state's: `dirty_gen` gets a new random value after every write that
 * changes the rollup's source. Its own document, which only marks write: FerretDB v1 writes an
 * update back as the whole document it read, so a mark kept on the state was undone now and then
 * by a rebuild's write to the state landing just after it (the rollup then looked current without
 * that write).
 */
const reportRollupMarkSchema = new Schema(
  {
    _id: { type: String, required: true },
    dirty_gen: { type: String, required: true },
    /** When the first write since the last rebuild's start marked it (unset by a rebuild as it starts). */
    dirty_since: { type: Date },
  },
  { versionKey: false },
);
export interface ReportRollupMarkDoc {
  _id: string;
  dirty_gen: string;
  dirty_since?: Date | null;
}
export const ReportRollupMark = model('ReportRollupMark', reportRollupMarkSchema, 'report_rollup_marks');

/**
 * One part of a build: a month (`part` `YYYY-MM`, `data` that month's rollup row) or, for
 * collections, `credit` (the unallocated credit per customer); for receivables, a month of due
 * dates (`part` `YYYY-MM`, `data` its open-invoice groups). `_id` `<build>|<part>`. Read by
 * `build` (one equality, pushed down to its index); a build's parts are written before the state
 * points at it and deleted after it no longer does.
 */
const reportRollupSchema = new Schema(
  {
    _id: { type: String, required: true },
    build: { type: String, required: true },
    account_id: { type: String, required: true },
    sandbox: { type: String, default: null },
    kind: { type: String, required: true },
    part: { type: String, required: true },
    data: { type: Schema.Types.Mixed },
  },
  { versionKey: false, minimize: false },
);
reportRollupSchema.index({ build: 1 });

export interface ReportRollupDoc {
  _id: string;
  build: string;
  account_id: string;
  sandbox: string | null;
  kind: RollupKind;
  part: string;
  data: unknown;
}
export const ReportRollup = model('ReportRollup', reportRollupSchema, 'report_rollups');
