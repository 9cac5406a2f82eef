/**
 * Browser tests: the real app on a loopback port and Debian's `chromium` (installed by `npm test`,
 * path in CHROMIUM_PATH) driven by playwright-core, both started before and closed after the file.
 */
import { existsSync } from 'node:fs';
import { chromium, Browser } from 'playwright-core';
import { startTestApi, TestApi } from './api';
import type { AppDeps } from '../../src/api/app';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
if (!CHROMIUM) throw new Error('no chromium found: `npm test` installs Debian\'s chromium (apt-get install chromium)');

/** `overrides` and `env`: as startTestApi's (say an injected throttle, or TRUST_PROXY). */
export function useApiAndBrowser(overrides: Partial<AppDeps> = {}, env: Record<string, string> = {}): { api: () => TestApi; browser: () => Browser } {
  let api: TestApi;
  let browser: Browser;
  beforeAll(async () => {
    api = await startTestApi(overrides, env);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });
  return { api: () => api, browser: () => browser };
}
