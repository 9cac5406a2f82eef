/**
 * Scenario 7: under `npm start` (scripts/start.sh, as a user runs it, on free ports and a
 * throwaway data directory), a process that dies is restarted while the others keep serving;
 * a worker asked to stop twice stops cleanly once; Ctrl-C stops everything.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScenarioContext, ScenarioResult } from '../scenario';
import { freePort, httpOk, logContains, ROOT, sleep, tail, waitUntil } from '../stack';

function childrenOf(pid: number): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push({ pid: Number(d), cmd: readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export async function crashedProcessIsRestarted(ctx: ScenarioContext): Promise<ScenarioResult> {
  const data = mkdtempSync(join(tmpdir(), 'payments-faults-start.'));
  const [port, temporalPort, uiPort, mongoPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const log = join(ctx.runDir, 'start.log');
  const fd = openSync(log, 'a');
  const start = spawn('bash', [join(ROOT, 'scripts/start.sh')], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: data, PORT: String(port), TEMPORAL_PORT: String(temporalPort), TEMPORAL_UI_PORT: String(uiPort), MONGO_PORT: String(mongoPort), MONGODB_URI: '', TEMPORAL_ADDRESS: '' },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<number | null>((r) => start.once('exit', (code) => r(code)));
  const ready = `http://127.0.0.1:${port}/readyz`;
  const problems: string[] = [];
  let unavailable = 0;
  let faults = 0;
  let recovered = 0;
  const allPids = new Set<number>();
  const part = (name: 'worker.ts' | 'server.ts') => childrenOf(start.pid!).find((c) => c.cmd.includes(name))?.pid;
  try {
    await waitUntil('npm start to serve', () => httpOk(ready), 600_000, 500).catch((err) => {
      throw new Error(`${err.message}\n${tail(log)}`);
    });
    for (const c of childrenOf(start.pid!)) allPids.add(c.pid);

    // 1. The worker dies: restarted, and the API answers all along.
    const worker = part('worker.ts')!;
    process.kill(worker, 'SIGKILL');
    faults += 1;
    const t1 = Date.now();
    await waitUntil('a new worker', async () => {
      if (!(await httpOk(ready).catch(() => false))) unavailable += 1;
      const now = part('worker.ts');
      return !!now && now !== worker;
    }, 60_000, 250);
    recovered = Math.max(recovered, (Date.now() - t1) / 1000);
    if (!logContains(log, 'worker-1 restarted')) problems.push('no "worker-1 restarted" line in the start log');

    // 2. The API dies: restarted and serving again.
    const api = part('server.ts')!;
    process.kill(api, 'SIGKILL');
    faults += 1;
    const t2 = Date.now();
    await waitUntil('the API back', async () => !!part('server.ts') && part('server.ts') !== api && (await httpOk(ready)), 120_000, 250);
    recovered = Math.max(recovered, (Date.now() - t2) / 1000);

    // 3. A worker asked to stop twice (SIGINT then SIGTERM at once): one clean shutdown, no crash.
    const w2 = part('worker.ts')!;
    const workerLog = join(data, 'logs', 'worker.log');
    const before = readFileSync(workerLog, 'utf8').length;
    process.kill(w2, 'SIGINT');
    process.kill(w2, 'SIGTERM');
    faults += 1;
    await waitUntil('the worker to stop', () => !alive(w2), 60_000, 100);
    const stopLog = readFileSync(workerLog, 'utf8').slice(before);
    const crash = /.*(IllegalStateError|Not running).*/.exec(stopLog);
    if (crash) problems.push(`the worker crashed on its second signal: ${crash[0].slice(0, 300)}`);
    if (!/worker stopped/.test(stopLog)) problems.push('the worker did not log a clean stop');
    await waitUntil('a worker again', async () => !!part('worker.ts'), 60_000, 250);
    for (const c of childrenOf(start.pid!)) allPids.add(c.pid);
  } finally {
    // 4. Ctrl-C stops everything.
    start.kill('SIGINT');
    const code = await Promise.race([exited, sleep(120_000).then(() => 'timeout' as const)]);
    if (code === 'timeout') {
      problems.push('npm start did not stop within 120 s of Ctrl-C');
      start.kill('SIGKILL');
    } else if (code !== 0) problems.push(`npm start exited ${code} on Ctrl-C`);
    const left = [...allPids].filter(alive);
    if (left.length) problems.push(`processes left after Ctrl-C: ${left.join(', ')}`);
    rmSync(data, { recursive: true, force: true });
  }
  return {
    name: 'crashed-process-restarted-under-npm-start',
    operations: faults,
    lost: problems.length + unavailable,
    doubled: 0,
    recoveredSeconds: recovered,
    details: [`${unavailable} failed readiness checks while the worker was down`, ...problems],
  };
}
