/** Signals and inputs of the crypto workflows. Pure: shared by services and workflows. */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export interface AllocationWorkflowInput {
  /** Customer id, or `<account>-<sandbox|live>` for account-wallet payments. */
  key: string;
  /** Transactions still queued when the workflow continued as new. */
  pending: string[];
}

/** Allocate this transaction (id) after the ones already queued. */
export const allocateSignal = defineSignal<[string]>('allocateTransaction');

export interface ClaimLinkInput {
  linkId: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** The link was used up or deleted: nothing left to expire. */
export const claimLinkClosedSignal = defineSignal('claimLinkClosed');

/** How long an idle allocation workflow waits for another signal before it completes. */
export const ALLOCATION_IDLE_MS = 60_000;
/** Transactions handled by one run before it continues as new (bounded history). */
export const ALLOCATION_RUN_LIMIT = 200;
/** Most transactions allocated by one activity call. */
export const ALLOCATION_BATCH = 25;

export interface ChainWatcherInput {
  currency: 'BTC' | 'ETH';
  /** Last block scanned (null: the stored cursor, or near the tip). */
  cursor: { height: number; hash: string } | null;
}

/** The watcher's last scanned block, for operators in the Temporal UI. */
export const chainCursorQuery = defineQuery<{ height: number; hash: string } | null>('chainCursor');
/** Scan now instead of at the end of the poll interval (e.g. after a new address was added). */
export const chainPollNowSignal = defineSignal('chainPollNow');

/** Scans per run before the watcher continues as new (bounded history). */
export const CHAIN_WATCHER_RUN_LIMIT = 500;
