/**
 * An operation and its floor measured in alternating rounds (issue 27, ADR 0819). On the shared
 * 2-core machine the CPU of one operation moves by a third within the hour, the floor's as much as
 * the service's; measured one after the other (the service's 1,000, then the floor's 1,000), a
 * drift of the machine in between fell on one side only and flipped verdicts from run to run.
 * In rounds ordered S F F S S F F S ..., each side runs as often early as late, so a steady drift
 * weighs on both alike; each side's figure is the sum over its rounds.
 */
import { withCpu, type CpuWindow } from './cpu';

export type Side = 'service' | 'floor';

/** Pairs of rounds a section measures (BENCH_CPU_ROUNDS). */
export const CPU_ROUNDS = Number(process.env.BENCH_CPU_ROUNDS ?? 4);

export interface Round {
  cpu: CpuWindow;
  seconds: number;
  operations: number;
}

export interface SideRounds {
  /** One round: `count` operations, returning once all are done (the measured window). */
  run(count: number): Promise<void>;
  /** After a round, outside any window: waits for the side's deferred work, so it falls in no other round's window. */
  settle?(): Promise<void>;
}

export interface Alternated {
  service: Round;
  floor: Round;
  /** In the order they ran. */
  rounds: { side: Side; round: Round }[];
}

/** The order of `pairs` pairs of rounds: S F, F S, S F, ... */
export function alternatingOrder(pairs: number): Side[] {
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error(`pairs must be a positive integer, got ${pairs}`);
  const order: Side[] = [];
  for (let i = 0; i < pairs; i++) order.push(...(i % 2 === 0 ? (['service', 'floor'] as const) : (['floor', 'service'] as const)));
  return order;
}

/** `total` split into `parts` sizes that differ by at most one, larger first. */
export function splitEvenly(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  return Array.from({ length: parts }, (_, i) => base + (i < total % parts ? 1 : 0));
}

export function sumRounds(rounds: Round[]): Round {
  const byRole: Record<string, number> = {};
  let total = 0;
  for (const r of rounds) {
    for (const [role, s] of Object.entries(r.cpu.byRole)) byRole[role] = (byRole[role] ?? 0) + s;
    total += r.cpu.total;
  }
  return { cpu: { byRole, total }, seconds: rounds.reduce((s, r) => s + r.seconds, 0), operations: rounds.reduce((s, r) => s + r.operations, 0) };
}

/** CPU milliseconds of one operation of `round`, every process counted. */
export function msPerOperation(round: Round): number {
  return (round.cpu.total * 1000) / Math.max(1, round.operations);
}

async function measureRound(count: number, side: SideRounds): Promise<Round> {
  const { cpu, seconds } = await withCpu(() => side.run(count));
  await side.settle?.();
  return { cpu, seconds, operations: count };
}

/** `total` operations on each side, in `pairs` pairs of rounds (alternatingOrder). */
export function alternate(total: number, pairs: number, sides: Record<Side, SideRounds>): Promise<Alternated> {
  return alternateMeasured(total, pairs, { service: (count) => measureRound(count, sides.service), floor: (count) => measureRound(count, sides.floor) });
}

/**
 * As `alternate`, for sides that measure their own window: a round that must prepare inside the
 * call (a renewal's subscriptions created, then its billing instant awaited) before its window opens.
 */
export async function alternateMeasured(total: number, pairs: number, sides: Record<Side, (count: number) => Promise<Round>>): Promise<Alternated> {
  const order = alternatingOrder(pairs);
  const sizes: Record<Side, number[]> = { service: splitEvenly(total, pairs), floor: splitEvenly(total, pairs) };
  const rounds: { side: Side; round: Round }[] = [];
  for (const side of order) rounds.push({ side, round: await sides[side](sizes[side].shift()!) });
  const of = (side: Side) => sumRounds(rounds.filter((r) => r.side === side).map((r) => r.round));
  return { service: of('service'), floor: of('floor'), rounds };
}

/** `  rounds (ms of CPU a <op>, service / floor): 1. 52.10 / 37.20 (x1.40), 2. ...`: each pair's figures, so the spread shows. */
export function roundsLine(op: string, a: Alternated): string {
  const service = a.rounds.filter((r) => r.side === 'service').map((r) => r.round);
  const floor = a.rounds.filter((r) => r.side === 'floor').map((r) => r.round);
  const pairs = service.map((s, i) => `${i + 1}. ${msPerOperation(s).toFixed(2)} / ${msPerOperation(floor[i]).toFixed(2)} (x${(msPerOperation(s) / msPerOperation(floor[i])).toFixed(2)})`);
  return `  rounds (ms of CPU a ${op}, service / floor, ${a.rounds.map((r) => (r.side === 'service' ? 'S' : 'F')).join(' ')}): ${pairs.join(', ')}; all: x${(msPerOperation(a.service) / msPerOperation(a.floor)).toFixed(2)}`;
}
