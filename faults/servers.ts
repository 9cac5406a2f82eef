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

export async function servers(runDir: string) {
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
  const temporalPort = await freePort();
  const temporal = new ManagedProcess({
    name: 'temporal',
    command: join(bin, 'temporal'),
    args: [
      'server', 'start-dev', '--ip', '127.0.0.1', '--port', String(temporalPort), '--namespace', 'default', '--headless',
      '--db-filename', join(runDir, 'temporal.db'), '--log-level', 'warn',
      '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal',
      ...SEARCH_ATTRIBUTES.flatMap((sa) => ['--search-attribute', sa]),
    ],
    env: process.env,
    log: join(runDir, 'temporal.log'),
    ready: () => isPortOpen(temporalPort),
  });
  await ferretdb.start();
  await temporal.start();
  return {
    ferretdb,
    temporal,
    mongoServerUrl: `mongodb://127.0.0.1:${mongoPort}`,
    temporalAddress: `127.0.0.1:${temporalPort}`,
    stop: async () => {
      await temporal.stop('SIGTERM');
      await ferretdb.stop('SIGTERM');
    },
  };
}
