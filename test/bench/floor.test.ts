/**
 * The CPU goal of an operation (issue 27): half of the first run's ratio, unless the floor measured
 * in the same run lies above it; then the floor plus 20%.
 */
import { goalWithFloor } from '../../bench/floor';
import { cpuTarget } from '../../bench/cpu';
import { parseTarget } from '../../bench/results';

const baseline = { cpuMs: 2, perSecond: 500, line: '' };

describe('goalWithFloor', () => {
  it('keeps half of the first run when the floor lies below it', () => {
    const goal = goalWithFloor(16.4, { ms: 28, statements: 5, lines: [] }, baseline); // floor x14
    expect(goal.ratio).toBe(16.4);
    expect(goal.label).toBe('half the first run');
  });

  it('takes the floor plus 20% when the floor lies above half of the first run', () => {
    const goal = goalWithFloor(17.3, { ms: 50, statements: 14, lines: [] }, baseline); // floor x25
    expect(goal.ratio).toBeCloseTo(30, 10);
    expect(goal.label).toBe('the floor x25.0 + 20%');
  });

  it('writes the goal into the target line, which results.ts reads back with its figure', () => {
    const goal = goalWithFloor(17.3, { ms: 50, statements: 14, lines: [] }, baseline);
    const met = parseTarget(cpuTarget('crypto', 'payment', { byRole: { worker: 58 }, total: 58 }, 1000, baseline, goal, true));
    expect(met).toEqual(expect.objectContaining({ value: 29, goal: 30, met: true, goalText: '<= x30.0 (the floor x25.0 + 20%)' }));
    const missed = parseTarget(cpuTarget('crypto', 'payment', { byRole: { worker: 62 }, total: 62 }, 1000, baseline, goal, true));
    expect(missed).toEqual(expect.objectContaining({ value: 31, goal: 30, met: false }));
  });
});
