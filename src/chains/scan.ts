/** Pure rules of the chain watcher: which blocks to scan next, confirmations, where to resume after a reorg. */
import type { BlockRef } from './types';

/** Most blocks one scan activity reads (bounded activity time; the workflow loops without sleeping while behind). */
export const MAX_BLOCKS_PER_SCAN = 50;

/** Confirmations of a transaction in the block at `blockHeight` when the tip is at `tipHeight` (its own block counts). */
export function confirmationsOf(tipHeight: number, blockHeight: number): number {
  return tipHeight >= blockHeight ? tipHeight - blockHeight + 1 : 0;
}

/**
 * Where a watcher without a cursor starts: just below the newest `threshold` blocks, so a
 * payment that is not final yet is still seen (older history is not rescanned).
 */
export function initialCursorHeight(tipHeight: number, threshold: number): number {
  return Math.max(-1, tipHeight - threshold);
}

/** The heights to scan after `cursorHeight` (inclusive range), or null when caught up with the tip. */
export function nextScanRange(cursorHeight: number, tipHeight: number, maxBlocks = MAX_BLOCKS_PER_SCAN): { from: number; to: number } | null {
  if (cursorHeight >= tipHeight) return null;
  return { from: cursorHeight + 1, to: Math.min(tipHeight, cursorHeight + maxBlocks) };
}

/**
 * The cursor's block is no longer in the best chain: resume `depth` blocks lower (at least the
 * confirmation threshold, the deepest reorg we take into account); rescanning is idempotent.
 */
export function rewoundCursorHeight(cursor: BlockRef, depth: number): number {
  return Math.max(-1, cursor.height - Math.max(1, depth));
}
