/**
 * FerretDB and the Temporal dev server, run by the fault suite itself (with the flags
 * scripts/lib.sh gives them) so that scenarios can stop, kill and restart them.
 * PostgreSQL, FerretDB's backend, is started by scripts/faults.sh (PG_FERRETDB_URL).
 */
import { Socket } from 'node:net';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, ManagedProcess, ROOT } from './stack';

export function isPortOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.setTimeout(1_000);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
    s.connect(port, '127.0.0.1');
  });
}

const SEARCH_ATTRIBUTES = ['AccountId=Keyword', 'CustomerId=Keyword', 'SubscriptionStatus=Keyword', 'NextBillingDate=Datetime'];

/** `startTemporal: false` leaves the dev server to be started when first needed (`temporal.start()`). */
export async function servers(runDir: string, opts: { startTemporal?: boolean } = {}) {
  const bin = join(ROOT, '.tools', 'bin');
  const mongoPort = await freePort();
  const ferretDir = join(runDir, 'ferretdb');
  mkdirSync(join(ferretDir, 'state'), { recursive: true });
  const pgUrl = process.env.PG_FERRETDB_URL;
  const backend = pgUrl
    ? [`--handler=postgresql`, `--postgresql-url=${pgUrl}`]
    : (mkdirSync(join(ferretDir, 'sqlite'), { recursive: true }), [`--handler=sqlite`, `--sqlite-url=file:${join(ferretDir, 'sqlite')}/?_txlock=immediate`]);
  const ferretdb = new ManagedProcess({
    name: 'ferretdb',
    command: join(bin, 'ferretdb'),
    args: [`--debug-addr=127.0.0.1:${await freePort()}`, ...backend, `--state-dir=${join(ferretDir, 'state')}`, `--listen-addr=127.0.0.1:${mongoPort}`, '--telemetry=disable', '--log-level=warn'],
    env: process.env,
    log: join(runDir, 'ferretdb.log'),
    ready: () => isPortOpen(mongoPort),
  });
  const { process: temporal, address: temporalAddress } = await temporalDevServer(runDir);
  await ferretdb.start();
  // One that did not come up must not leave the other running past the caller (a test).
  if (opts.startTemporal ?? true) await temporal.start().catch(async (err) => {
    await ferretdb.stop('SIGKILL');
    throw err;
  });
  return {
    ferretdb,
    temporal,
    mongoServerUrl: `mongodb://127.0.0.1:${mongoPort}`,
    temporalAddress,
    stop: async () => {
      await temporal.stop('SIGTERM');
      await ferretdb.stop('SIGTERM');
    },
  };
}

/**
 * A Temporal dev server (not started) on a free port, with scripts/lib.sh's flags and `extraArgs`
 * (e.g. `--dynamic-config-value`); `name` names its database and log in `runDir`.
 */
export async function temporalDevServer(runDir: string, opts: { name?: string; extraArgs?: string[] } = {}): Promise<{ process: ManagedProcess; address: string }> {
  const name = opts.name ?? 'temporal';
  const port = await freePort();
  const proc = new ManagedProcess({
    name,
    command: join(ROOT, '.tools', 'bin', 'temporal'),
    args: [
      'server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--namespace', 'default', '--headless',
      '--db-filename', join(runDir, `${name}.db`), '--log-level', 'warn',
      '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal',
      ...SEARCH_ATTRIBUTES.flatMap((sa) => ['--search-attribute', sa]),
      ...(opts.extraArgs ?? []),
    ],
    env: process.env,
    log: join(runDir, `${name}.log`),
    ready: () => isPortOpen(port),
  });
  return { process: proc, address: `127.0.0.1:${port}` };
}
