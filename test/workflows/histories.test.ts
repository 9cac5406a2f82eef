/**
 * Kept histories (test/workflows/histories, listed in its manifest.json) are read-only fixtures of
 * the code that recorded them: each is there with its checksum, says truly which workflow it is and
 * which patch markers it holds, and replays against today's code. Every exported workflow has one,
 * and every `patched()` id has one recorded before it (a run started then, which must still replay).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as workflows from '../../src/workflows';
import { decodeHistoryFile, fixtureHistory, HistoryFixture, historiesDir, historiesManifest, patchMarkersOf, replay, sha256Of } from '../support/workflows';

const manifest = historiesManifest();
const listed = Object.keys(manifest).sort();
const nameOf = (file: string) => file.replace(/(\.history\.pb|\.json)$/, '');
const exported = Object.entries(workflows).filter(([, v]) => typeof v === 'function').map(([name]) => name);

/** What the manifest says of a file, read from the file (sha256, workflow type, patch markers). */
function entryFromFile(file: string): Pick<HistoryFixture, 'sha256' | 'workflowType' | 'patches'> {
  const path = join(historiesDir, file);
  const history = decodeHistoryFile(path);
  return {
    sha256: sha256Of(path),
    workflowType: history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '',
    patches: patchMarkersOf(history),
  };
}

interface PatchCall {
  id: string;
  kind: 'patched' | 'deprecatePatch';
  file: string;
  /** The exported workflows the file defines (none: a helper, any workflow may call it). */
  workflowTypes: string[];
}

/** Every `patched(...)` and `deprecatePatch(...)` in src/workflows, its argument a string or a `const` of the same file. */
function patchCalls(): PatchCall[] {
  const dir = join(__dirname, '..', '..', 'src', 'workflows');
  return readdirSync(dir).filter((f) => f.endsWith('.ts')).flatMap((file) => {
    const text = readFileSync(join(dir, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
    const workflowTypes = [...text.matchAll(/export\s+(?:async\s+)?function\s+(\w+)/g)].map((m) => m[1]).filter((n) => exported.includes(n));
    return [...text.matchAll(/\b(patched|deprecatePatch)\(\s*([^)\s]+)\s*\)/g)].map((m) => {
      const arg = m[2];
      const literal = /^(['"`])([^'"`]+)\1$/.exec(arg)?.[2];
      const id = literal ?? new RegExp(`\\bconst\\s+${arg}\\s*=\\s*(['"\`])([^'"\`]+)\\1`).exec(text)?.[2];
      if (!id) throw new Error(`src/workflows/${file}: cannot tell the patch id of ${m[0]} (a string or a const of the same file)`);
      return { id, kind: m[1] as PatchCall['kind'], file, workflowTypes };
    });
  });
}

it('lists every file in test/workflows/histories in manifest.json, and each listed file is there with its sha256', () => {
  const files = readdirSync(historiesDir).filter((f) => f !== 'manifest.json').sort();
  // An unlisted file: the entry to add (predates: the patch ids it was recorded before).
  expect(files.filter((f) => !manifest[f]).map((f) => ({ [f]: { ...entryFromFile(f), predates: [] } }))).toEqual([]);
  expect(listed.filter((f) => !files.includes(f))).toEqual([]);
  expect(listed.map((f) => [f, sha256Of(join(historiesDir, f))])).toEqual(listed.map((f) => [f, manifest[f].sha256]));
});

it("gives each kept history's workflow type and patch markers as its events have them", () => {
  const fromFiles = listed.map((f) => [f, entryFromFile(f)]);
  expect(fromFiles.map(([f, e]) => [f, { workflowType: (e as HistoryFixture).workflowType, patches: (e as HistoryFixture).patches }]))
    .toEqual(listed.map((f) => [f, { workflowType: manifest[f].workflowType, patches: manifest[f].patches }]));
});

it('has a kept history for every exported workflow', () => {
  const covered = new Set(listed.map((f) => manifest[f].workflowType));
  expect(exported.length).toBeGreaterThan(5);
  expect(exported.filter((name) => !covered.has(name))).toEqual([]);
});

it('has, for every patched() id, a kept history of its workflow recorded before it (and for a deprecatePatch() id, one with its marker)', () => {
  const calls = patchCalls();
  expect(calls.length).toBeGreaterThan(0);
  const ofType = (call: PatchCall) => listed.filter((f) => call.workflowTypes.length === 0 || call.workflowTypes.includes(manifest[f].workflowType));
  const uncovered = calls.filter((call) =>
    call.kind === 'patched'
      ? !ofType(call).some((f) => manifest[f].predates.includes(call.id))
      : !ofType(call).some((f) => manifest[f].patches.includes(call.id)));
  expect(uncovered.map((c) => `${c.kind}('${c.id}') in src/workflows/${c.file}`)).toEqual([]);
  // What a kept history predates is a patch of its workflow, whose marker it does not hold.
  const wrong = listed.flatMap((f) => manifest[f].predates
    .filter((id) => manifest[f].patches.includes(id) || !calls.some((c) => c.id === id && c.kind === 'patched' && (c.workflowTypes.length === 0 || c.workflowTypes.includes(manifest[f].workflowType))))
    .map((id) => `${f} predates ${id}`));
  expect(wrong).toEqual([]);
});

describe("every kept history replays against today's code", () => {
  it.each(listed)('%s', async (file) => {
    await replay(fixtureHistory(nameOf(file)), `replay-fixture-${nameOf(file)}`);
  });
});
