/**
 * Idle section of `npm run bench`: the CPU the whole stack spends per second while nobody calls it
 * (background workflows, pollers, the database's own housekeeping), by process. Every other
 * section's CPU per operation includes this much per second of its window. Measured after the
 * stack has settled from its start (SETTLE_SECONDS).
 */
import { cpuLine, withCpu } from './cpu';

const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const SETTLE_SECONDS = 15;

export async function runIdleBench(): Promise<string[]> {
  await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
  const { cpu, seconds } = await withCpu(() => new Promise((r) => setTimeout(r, SECONDS * 1000)));
  return [`idle: the stack with nobody calling it for ${SECONDS} s`, cpuLine('the idle window', cpu, seconds), `  idle cpu: ${((cpu.total * 1000) / seconds).toFixed(1)} ms per second (all processes)`];
}
