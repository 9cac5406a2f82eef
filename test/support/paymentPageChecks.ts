/**
 * Checks of the customer's payment pages in a browser (a claim link's pay page, an invoice's
 * hosted page): what a QR code on the page holds; and what axe-core finds serious or critical on
 * any page (the console's too).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import jsQR from 'jsqr';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The text of the QR code shown by the image `selector`, read back from a screenshot of it (kept in `artifacts` when unreadable). */
export async function decodeQr(page: Page, selector: string, artifacts: string): Promise<string | null> {
  const img = page.locator(selector);
  await img.scrollIntoViewIfNeeded();
  await page.waitForFunction((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0, await img.elementHandle());
  const shotOfQr = await img.screenshot();
  const png = PNG.sync.read(shotOfQr);
  const text = jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null;
  if (text === null) writeFileSync(join(artifacts, `undecoded-qr-${Date.now()}.png`), shotOfQr);
  return text;
}

/** axe-core's serious and critical findings on the page, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(() => (window as unknown as { axe: { run: (o: object) => Promise<any> } }).axe.run({ resultTypes: ['violations'] }));
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
