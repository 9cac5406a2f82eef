/** Signals and inputs of the report-rollup workflow. Pure: shared by services and workflows. */
import { defineSignal } from '@temporalio/workflow';
import type { RollupKind } from '../models/reportRollup';

export type { RollupKind };

export interface ReportRollupWorkflowInput {
  accountId: string;
  sandbox: string | null;
  /** Rollups still to rebuild when the workflow continued as new. */
  pending: RollupKind[];
}

/** The source of this rollup changed: rebuild it (after the debounce). Idempotent: repeating it rebuilds once. */
export const rollupStaleSignal = defineSignal<[RollupKind]>('rollupStale');

/** Quiet time after the last signal before a rebuild (writes in a burst give one rebuild). */
export const ROLLUP_DEBOUNCE_MS = 2_000;
/** A rebuild happens at most this long after the first signal, however busy the account. */
export const ROLLUP_MAX_DELAY_MS = 15_000;
/** How long an idle workflow waits for another signal before it completes. */
export const ROLLUP_IDLE_MS = 60_000;
/** Rebuilds by one run before it continues as new (bounded history). */
export const ROLLUP_RUN_LIMIT = 100;
