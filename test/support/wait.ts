/**
 * Polling for what happens in another process (worker, node, receiver). `pause` runs between
 * checks: 50 ms of wall clock, or a step of a time-skipping server's clock.
 */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  what: string,
  timeoutMs = 30_000,
  pause: () => Promise<unknown> = () => sleep(50),
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
