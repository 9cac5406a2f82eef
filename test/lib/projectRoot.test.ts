import { existsSync } from 'node:fs';
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
