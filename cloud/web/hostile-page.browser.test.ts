// The data browser in a real browser (headless Debian chromium) under the attacks of issue 27: signing
// in with a 128 KiB key id shows a short refusal, and signing in right after works (finding 3); a name
// that rebinds to this machine gets 403 (finding 10).
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../core/serving/testing/chromium.js';
import { adminJson, removeDataDir, spawnCloud } from '../testing/spawn-cloud.js';

test.before(() => {
  execFileSync(process.execPath, [fileURLToPath(new URL('../../scripts/build-web.mjs', import.meta.url))], { stdio: 'inherit' });
});

test('a 128 KiB key id gets a short refusal on the page, the next sign-in works, and a rebound name gets 403', async (t) => {
  const cloud = await spawnCloud();
  t.teardown(async () => {
    await cloud.stop();
    removeDataDir(cloud.dataDir);
  });
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'hostile-page']);
  const key = await adminJson(cloud.dataDir, ['key', 'create', '--org', org.id, '--role', 'owner']);
  const browser = await chromium.launch({
    executablePath: process.env.PLATFORM_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP rebind.attacker.example 127.0.0.1'],
  });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(cloud.webUrl);
  // The form's own field (fill sets the value at once, as a paste does).
  await page.getByLabel('API key id').fill('e'.repeat(128 * 1024));
  await page.getByLabel('API key', { exact: true }).fill('not-the-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Refused by its length before any lookup (Authenticate caps the entity at 256 characters), in a short alert.
  const alert = await page.getByRole('alert').innerText();
  t.regex(alert, /entity: at most 256 characters \(an API key id or a machine part id\), got 131072/);
  t.true(alert.length < 600, `${alert.length} characters`);
  // An unknown id within the cap is refused with the bounded echo of what was sent.
  await page.getByLabel('API key id').fill('e'.repeat(256));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'invalid credentials for entity' }).waitFor();
  const echoed = await page.getByRole('alert').innerText();
  t.regex(echoed, /invalid credentials for entity e+… \(\d+ more characters\)/);
  t.true(echoed.length < 600, `${echoed.length} characters`);

  await page.getByLabel('API key id').fill(key.id);
  await page.getByLabel('API key', { exact: true }).fill(key.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').waitFor();
  t.regex(await page.getByTestId('signed-in').innerText(), new RegExp(key.id));

  const rebound = await browser.newPage();
  const response = await rebound.goto(cloud.webUrl.replace('127.0.0.1', 'rebind.attacker.example'));
  t.is(response?.status(), 403);
  t.regex(await rebound.innerText('body'), /is not a name of this web port/);
});
