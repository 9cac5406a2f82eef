import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, projectPath, resolvePackage } from '../../src/lib/projectRoot';

describe('projectRoot (Node side; the Deno side runs in test/runtime/deno.test.ts)', () => {
  it('is the folder of package.json, and resolves packages from it', () => {
    expect(PROJECT_ROOT).toBe(path.resolve(__dirname, '..', '..'));
    expect(existsSync(projectPath('package.json'))).toBe(true);
    expect(existsSync(projectPath('src', 'workflows', 'index.ts'))).toBe(true);
    expect(resolvePackage('chart.js')).toBe(require.resolve('chart.js'));
  });
});

describe('sources that run under Deno too', () => {
  // Deno runs src/ and worker.ts as ES modules: no __dirname, __filename or require. Paths go
  // through src/lib/projectRoot.ts (docs/architecture.md, "Runtimes: Node and Deno"). Comment lines are left out of the check.
  it('use no __dirname, __filename or require outside src/lib/projectRoot.ts', () => {
    const files: string[] = [projectPath('worker.ts')];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (name.endsWith('.ts') && file !== projectPath('src', 'lib', 'projectRoot.ts')) files.push(file);
      }
    };
    walk(projectPath('src'));
    const offenders: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, '').replace(/^\s*(\/\*\*?|\*).*$/, '');
        if (/\b(__dirname|__filename)\b|\brequire\s*[(.]/.test(code)) offenders.push(`${path.relative(PROJECT_ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(files.length).toBeGreaterThan(100);
    expect(offenders).toEqual([]);
  });
});
