/**
 * Runs `pass` now and then `intervalMs` after each pass ends (never two at once), until the
 * returned stop function is called; stopping waits for the pass in progress. `pass` handles its
 * own errors. Used by the sweepers that run in every API and worker process.
 */
export function runPeriodically(pass: () => Promise<void>, intervalMs: number): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = pass().finally(() => {
      if (!stopped) timer = setTimeout(tick, intervalMs);
    });
  };
  tick();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await running;
  };
}
