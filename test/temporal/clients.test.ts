/**
 * The workflow clients (src/temporal/clients) start workflows by type name, so services never
 * import workflow code; a name that no longer matches an exported workflow would only fail at
 * run time, on the worker. Here it fails in the test run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as workflows from '../../src/workflows';

const clientsDir = join(__dirname, '..', '..', 'src', 'temporal', 'clients');

it('every workflow type a client starts is an exported workflow, and every exported workflow has a client', () => {
  const started = new Set<string>();
  for (const file of readdirSync(clientsDir)) {
    for (const m of readFileSync(join(clientsDir, file), 'utf8').matchAll(/(?:workflowType: |\.start\()'([A-Za-z]+Workflow)'/g)) started.add(m[1]);
  }
  expect(started.size).toBeGreaterThan(5);
  const exported = Object.entries(workflows).filter(([, v]) => typeof v === 'function').map(([name]) => name);
  expect([...started].filter((name) => !exported.includes(name))).toEqual([]);
  expect(exported.filter((name) => !started.has(name))).toEqual([]);
});
