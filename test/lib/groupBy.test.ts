import { groupBy } from '../../src/lib/groupBy';

describe('groupBy', () => {
  it('keeps groups and their members in the order first met', () => {
    const groups = groupBy(['b1', 'a1', 'b2', 'c1', 'a2'], (s) => s[0]);
    expect([...groups.entries()]).toEqual([
      ['b', ['b1', 'b2']],
      ['a', ['a1', 'a2']],
      ['c', ['c1']],
    ]);
  });

  it('gives an empty map for no items', () => {
    expect(groupBy([], (x: number) => x).size).toBe(0);
  });
});
