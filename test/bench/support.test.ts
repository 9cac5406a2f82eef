import { settled } from '../../bench/support';

describe('settled (a bench waits, outside its windows, for the rollups an operation left due)', () => {
  it('answers once every reader answers, having asked each again until then', async () => {
    let receivablesAsked = 0;
    let collectionsAsked = 0;
    const seconds = await settled([
      async () => (++receivablesAsked >= 3 ? { groups: [] } : null),
      async () => (++collectionsAsked >= 2 ? { months: [] } : null),
    ]);
    expect(seconds).not.toBeNull();
    expect(seconds!).toBeGreaterThanOrEqual(0.4);
    expect(receivablesAsked).toBe(3);
    expect(collectionsAsked).toBe(3);
  });

  it('gives up after its timeout with null, so that the section can say its window may hold them', async () => {
    let asked = 0;
    const seconds = await settled([async () => (++asked, null)], 600);
    expect(seconds).toBeNull();
    expect(asked).toBeGreaterThanOrEqual(2);
  });
});
