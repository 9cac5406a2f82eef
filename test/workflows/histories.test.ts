/** Every workflow type the worker runs has a kept history that its replay test replays. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import * as workflows from '../../src/workflows';

const dir = join(__dirname, 'histories');

function workflowTypeOf(file: string): string | undefined {
  const path = join(dir, file);
  if (file.endsWith('.history.pb')) {
    const history = temporal.api.history.v1.History.decode(readFileSync(path));
    return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? undefined;
  }
  const json = JSON.parse(readFileSync(path, 'utf8'));
  return json.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;
}

it('has a kept history for every exported workflow', () => {
  const covered = new Set(readdirSync(dir).map(workflowTypeOf));
  const exported = Object.entries(workflows).filter(([, v]) => typeof v === 'function').map(([name]) => name);
  expect(exported.length).toBeGreaterThan(5);
  expect(exported.filter((name) => !covered.has(name))).toEqual([]);
});
