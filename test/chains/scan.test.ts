/**
 * The chain watcher's pure rules (src/chains/scan.ts): confirmations, where a new watcher
 * starts, which blocks the next scan reads, where to resume after a reorg.
 */
import fc from 'fast-check';
import { confirmationsOf, initialCursorHeight, MAX_BLOCKS_PER_SCAN, nextScanRange, rewoundCursorHeight } from '../../src/chains/scan';

const HASH = 'ab'.repeat(32);
const cursorAt = (height: number) => ({ height, hash: HASH });

describe('confirmationsOf', () => {
  it('counts the transaction’s own block and every block above it', () => {
    expect(confirmationsOf(100, 100)).toBe(1);
    expect(confirmationsOf(101, 100)).toBe(2);
    expect(confirmationsOf(105, 100)).toBe(6);
    expect(confirmationsOf(0, 0)).toBe(1);
  });

  it('is 0 for a block above the tip (not in the chain we know)', () => {
    expect(confirmationsOf(99, 100)).toBe(0);
    expect(confirmationsOf(0, 1)).toBe(0);
  });

  it('is tip - block + 1 at or below the tip, 0 above it, and grows by one per block', () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.nat(10_000_000), (tip, block) => {
        const c = confirmationsOf(tip, block);
        expect(c).toBe(tip >= block ? tip - block + 1 : 0);
        expect(confirmationsOf(tip + 1, block)).toBe(tip + 1 >= block ? c + 1 : 0);
      }),
    );
  });
});

describe('initialCursorHeight', () => {
  it('starts just below the newest `threshold` blocks', () => {
    expect(initialCursorHeight(100, 2)).toBe(98);
    expect(initialCursorHeight(100, 6)).toBe(94);
    expect(initialCursorHeight(100, 1)).toBe(99);
  });

  it('is -1 (scan from the genesis block) on a chain shorter than the threshold', () => {
    expect(initialCursorHeight(0, 2)).toBe(-1);
    expect(initialCursorHeight(1, 2)).toBe(-1);
    expect(initialCursorHeight(2, 2)).toBe(0);
    expect(initialCursorHeight(3, 100)).toBe(-1);
  });

  it('leaves every block that has fewer than `threshold` confirmations to be scanned', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.integer({ min: 1, max: 10_000 }), (tip, threshold) => {
        const cursor = initialCursorHeight(tip, threshold);
        expect(cursor).toBeGreaterThanOrEqual(-1);
        expect(cursor).toBeLessThan(tip);
        // The first block scanned (cursor + 1) and every block above it: not final yet, or just final.
        for (let h = cursor + 1; h <= Math.min(tip, cursor + 3); h++) expect(confirmationsOf(tip, h)).toBeLessThanOrEqual(threshold);
        // Every block below it is already final: not scanned again.
        if (cursor >= 0) expect(confirmationsOf(tip, cursor)).toBeGreaterThan(threshold);
      }),
    );
  });
});

describe('nextScanRange', () => {
  it('is null once the cursor is at or above the tip', () => {
    expect(nextScanRange(10, 10)).toBeNull();
    expect(nextScanRange(11, 10)).toBeNull();
    expect(nextScanRange(-1, -1)).toBeNull();
  });

  it('reads the blocks after the cursor up to the tip', () => {
    expect(nextScanRange(9, 10)).toEqual({ from: 10, to: 10 });
    expect(nextScanRange(5, 10)).toEqual({ from: 6, to: 10 });
    expect(nextScanRange(-1, 0)).toEqual({ from: 0, to: 0 });
    expect(nextScanRange(-1, 3)).toEqual({ from: 0, to: 3 });
  });

  it(`reads at most MAX_BLOCKS_PER_SCAN (${MAX_BLOCKS_PER_SCAN}) blocks at a time`, () => {
    expect(MAX_BLOCKS_PER_SCAN).toBe(50);
    expect(nextScanRange(0, 1_000)).toEqual({ from: 1, to: MAX_BLOCKS_PER_SCAN });
    expect(nextScanRange(-1, 1_000)).toEqual({ from: 0, to: MAX_BLOCKS_PER_SCAN - 1 });
    expect(nextScanRange(100, 100 + MAX_BLOCKS_PER_SCAN)).toEqual({ from: 101, to: 100 + MAX_BLOCKS_PER_SCAN });
    expect(nextScanRange(100, 101 + MAX_BLOCKS_PER_SCAN)).toEqual({ from: 101, to: 100 + MAX_BLOCKS_PER_SCAN });
    expect(nextScanRange(0, 1_000, 10)).toEqual({ from: 1, to: 10 });
    expect(nextScanRange(0, 1_000, 1)).toEqual({ from: 1, to: 1 });
  });

  it('consecutive scans cover every height from cursor + 1 to the tip exactly once, in order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1, max: 1_000_000 }),
        fc.nat(600),
        fc.option(fc.integer({ min: 1, max: 120 }), { nil: undefined }),
        (cursor, ahead, maxBlocks) => {
          const tip = cursor + ahead;
          const cap = maxBlocks ?? MAX_BLOCKS_PER_SCAN;
          const seen: number[] = [];
          let at = cursor;
          let scans = 0;
          for (let range = nextScanRange(at, tip, maxBlocks); range; range = nextScanRange(at, tip, maxBlocks)) {
            expect(range.from).toBe(at + 1);
            expect(range.to).toBeGreaterThanOrEqual(range.from);
            expect(range.to - range.from + 1).toBeLessThanOrEqual(cap);
            for (let h = range.from; h <= range.to; h++) seen.push(h);
            at = range.to;
            scans += 1;
            if (scans > ahead + 1) throw new Error('nextScanRange does not progress');
          }
          expect(at).toBe(Math.max(cursor, tip));
          expect(seen).toEqual(Array.from({ length: ahead }, (_, i) => cursor + 1 + i));
          expect(scans).toBe(Math.ceil(ahead / cap));
        },
      ),
    );
  });

  it('a tip that moves on between scans is still covered exactly once', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1, max: 1_000 }), fc.array(fc.nat(200), { minLength: 1, maxLength: 20 }), (cursor, growth) => {
        let tip = cursor;
        let at = cursor;
        const seen: number[] = [];
        for (const g of growth) {
          tip += g;
          const range = nextScanRange(at, tip);
          if (!range) continue;
          for (let h = range.from; h <= range.to; h++) seen.push(h);
          at = range.to;
        }
        for (let range = nextScanRange(at, tip); range; range = nextScanRange(at, tip)) {
          for (let h = range.from; h <= range.to; h++) seen.push(h);
          at = range.to;
        }
        expect(seen).toEqual(Array.from({ length: tip - cursor }, (_, i) => cursor + 1 + i));
      }),
    );
  });
});

describe('rewoundCursorHeight', () => {
  it('resumes `depth` blocks below a cursor that left the best chain', () => {
    expect(rewoundCursorHeight(cursorAt(100), 2)).toBe(98);
    expect(rewoundCursorHeight(cursorAt(100), 6)).toBe(94);
    expect(rewoundCursorHeight(cursorAt(100), 1)).toBe(99);
  });

  it('always goes at least one block lower (the cursor’s own block is gone)', () => {
    expect(rewoundCursorHeight(cursorAt(100), 0)).toBe(99);
    expect(rewoundCursorHeight(cursorAt(100), -5)).toBe(99);
  });

  it('never goes below -1 (rescan from the genesis block)', () => {
    expect(rewoundCursorHeight(cursorAt(1), 2)).toBe(-1);
    expect(rewoundCursorHeight(cursorAt(0), 2)).toBe(-1);
    expect(rewoundCursorHeight(cursorAt(0), 0)).toBe(-1);
    expect(rewoundCursorHeight(cursorAt(3), 1_000)).toBe(-1);
  });

  it('the next scan after a rewind reads the replaced block again', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.integer({ min: 0, max: 1_000 }), fc.nat(10), (height, depth, newBlocks) => {
        const at = rewoundCursorHeight(cursorAt(height), depth);
        expect(at).toBe(Math.max(-1, height - Math.max(1, depth)));
        expect(at).toBeLessThan(height);
        // The new chain is at least as high as the old cursor minus nothing: its block at `height` gets rescanned.
        const range = nextScanRange(at, height + newBlocks, Number.MAX_SAFE_INTEGER);
        expect(range).not.toBeNull();
        expect(range!.from).toBeLessThanOrEqual(height);
        expect(range!.to).toBe(height + newBlocks);
      }),
    );
  });
});
