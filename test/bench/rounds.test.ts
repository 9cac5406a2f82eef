/**
 * An operation and its floor measured in alternating rounds (bench/rounds.ts): the order that puts
 * each side as often early as late, the split of the operations, and each side's sum.
 */
import { alternate, alternateMeasured, alternatingOrder, roundsLine, splitEvenly, sumRounds, type Round } from '../../bench/rounds';

describe('alternatingOrder', () => {
  it('alternates the side that goes first in each pair: S F F S S F F S', () => {
    expect(alternatingOrder(4)).toEqual(['service', 'floor', 'floor', 'service', 'service', 'floor', 'floor', 'service']);
  });

  it('gives each side the same mean position over an even number of pairs', () => {
    const order = alternatingOrder(6);
    const mean = (side: string) => order.flatMap((s, i) => (s === side ? [i] : [])).reduce((a, b) => a + b, 0) / 6;
    expect(mean('service')).toBe(mean('floor'));
  });

  it('refuses a count of pairs that is not a positive integer', () => {
    expect(() => alternatingOrder(0)).toThrow(/positive integer/);
    expect(() => alternatingOrder(1.5)).toThrow(/positive integer/);
  });
});

describe('splitEvenly', () => {
  it('splits into sizes that differ by at most one and add up to the total', () => {
    expect(splitEvenly(1000, 4)).toEqual([250, 250, 250, 250]);
    expect(splitEvenly(10, 4)).toEqual([3, 3, 2, 2]);
  });
});

describe('sumRounds', () => {
  it('adds the CPU of each role, the seconds and the operations', () => {
    const a: Round = { cpu: { byRole: { api: 1, worker: 2 }, total: 3 }, seconds: 5, operations: 250 };
    const b: Round = { cpu: { byRole: { worker: 1.5, ferretdb: 0.5 }, total: 2 }, seconds: 4, operations: 250 };
    expect(sumRounds([a, b])).toEqual({ cpu: { byRole: { api: 1, worker: 3.5, ferretdb: 0.5 }, total: 5 }, seconds: 9, operations: 500 });
  });
});

describe('alternate', () => {
  it('runs the rounds in the alternating order, settles a side after each of its rounds, and sums each side', async () => {
    const log: string[] = [];
    const side = (name: string, settle: boolean) => ({
      run: async (count: number) => void log.push(`${name} ${count}`),
      ...(settle ? { settle: async () => void log.push(`${name} settled`) } : {}),
    });
    const result = await alternate(10, 2, { service: side('S', true), floor: side('F', false) });
    expect(log).toEqual(['S 5', 'S settled', 'F 5', 'F 5', 'S 5', 'S settled']);
    expect(result.service.operations).toBe(10);
    expect(result.floor.operations).toBe(10);
    expect(result.rounds.map((r) => r.side)).toEqual(['service', 'floor', 'floor', 'service']);
    expect(result.service.cpu.total).toBeCloseTo(result.rounds.filter((r) => r.side === 'service').reduce((s, r) => s + r.round.cpu.total, 0), 10);
  });
});

describe('alternateMeasured', () => {
  it('takes each round as its side measured it, in the alternating order, and sums each side', async () => {
    const log: string[] = [];
    const side = (name: string, msEach: number) => async (count: number): Promise<Round> => {
      log.push(`${name} ${count}`);
      return { cpu: { byRole: { worker: (count * msEach) / 1000 }, total: (count * msEach) / 1000 }, seconds: 1, operations: count };
    };
    const result = await alternateMeasured(7, 2, { service: side('S', 30), floor: side('F', 20) });
    expect(log).toEqual(['S 4', 'F 4', 'F 3', 'S 3']);
    expect(result.service).toEqual({ cpu: { byRole: { worker: 0.21 }, total: 0.21 }, seconds: 2, operations: 7 });
    expect(result.floor.cpu.total).toBeCloseTo(0.14, 10);
    expect(result.rounds.map((r) => r.round.operations)).toEqual([4, 4, 3, 3]);
  });
});

describe('roundsLine', () => {
  it('prints each pair of rounds per operation and the ratio of the sums', () => {
    const round = (total: number): Round => ({ cpu: { byRole: { worker: total }, total }, seconds: 1, operations: 100 });
    const service = [round(5), round(6)];
    const floor = [round(4), round(4)];
    const line = roundsLine('payment', {
      service: sumRounds(service),
      floor: sumRounds(floor),
      rounds: [
        { side: 'service', round: service[0] },
        { side: 'floor', round: floor[0] },
        { side: 'floor', round: floor[1] },
        { side: 'service', round: service[1] },
      ],
    });
    expect(line).toBe('  rounds (ms of CPU a payment, service / floor, S F F S): 1. 50.00 / 40.00 (x1.25), 2. 60.00 / 40.00 (x1.50); all: x1.38');
  });
});
