// Test helper for the data browser's browser tests: a fresh Chromium page signed in with an API key, on one
// of the page's views.
import type { Page } from 'playwright-core';
import { launchChromium } from '../../core/serving/testing/chromium.js';

/** Opens `webUrl`, signs in with `key` and opens the navigation's `view`; the browser closes at teardown. */
export async function signedInView(
  t: { teardown(fn: () => Promise<void>): void },
  webUrl: string,
  key: { id: string; key: string },
  view: string,
): Promise<Page> {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
  await page.goto(webUrl);
  await page.getByLabel('API key id').fill(key.id);
  await page.getByLabel('API key', { exact: true }).fill(key.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').waitFor();
  await page.getByRole('navigation').getByRole('link', { name: view, exact: true }).click();
  // The view replaces the data browser only after the hash change and, for a lazy view, its chunk: until then
  // getByLabel (case-insensitive, by substring) also finds the data browser's fields (seen in the full suite).
  await page.locator('nav a[aria-current="page"]', { hasText: view }).waitFor();
  await page.getByText(`Loading ${view}…`).waitFor({ state: 'detached' });
  return page;
}
