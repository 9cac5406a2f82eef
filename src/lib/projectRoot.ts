/**
 * Where the project's files are, on both runtimes. Under Node (tsx, Jest) the sources run as
 * CommonJS and this module's `__dirname` says it; under Deno they run as ES modules, which have
 * no `__dirname` and no `require`, and `import.meta` is no option here (tsc with
 * module=commonjs refuses it), so the root is the nearest folder above the main module
 * (`worker.ts`, `src/api/server.ts`) that holds package.json.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  if (typeof __dirname === 'string') return path.resolve(__dirname, '..', '..');
  const main = (globalThis as { Deno?: { mainModule: string } }).Deno?.mainModule;
  if (!main) throw new Error('no __dirname and no Deno.mainModule: cannot tell where the project is');
  for (let dir = path.dirname(fileURLToPath(main)); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${main}`);
  }
}

/** The folder of package.json. */
export const PROJECT_ROOT = findRoot();

/** A path inside the project: projectPath('src', 'workflows'). */
export function projectPath(...parts: string[]): string {
  return path.join(PROJECT_ROOT, ...parts);
}

/** `require.resolve` from the project's root (a package in node_modules), on both runtimes. */
export function resolvePackage(id: string): string {
  return createRequire(path.join(PROJECT_ROOT, 'package.json')).resolve(id);
}
