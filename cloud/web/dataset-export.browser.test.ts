// The dataset page's version and export buttons and the data browser's MCAP button in a real browser
// (headless Debian chromium) against the real platform-cloud: the zip the page downloads is byte for
// byte the TypeScript client's export of the same version, and the MCAP reads back with its CRCs.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../../core/serving/testing/chromium.js';
import { readMcap } from '../data/testing/read-mcap.js';
import { startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyPng } from './testing-images.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let fx: CloudFixture;
let dir: string;

test.before(async () => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
  fx = await startFixture();
  dir = mkdtempSync(join(tmpdir(), 'dataset-export-page-'));
});

test.after.always(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

test.serial('Make version, then Export as YOLO downloads the same zip the client exports; Export MCAP downloads the filtered images', async (t) => {
  const owner = fx.client(fx.keys.ownerA).dataClient;
  const now = new Date();
  const ids = [];
  for (const seed of [1, 2]) {
    ids.push(
      await owner.binaryDataCaptureUpload(noisyPng(64, 48, seed), fx.machineA1.part_id, 'camera', 'page-cam', 'ReadImage', '.png', [now, now], ['page']),
    );
  }
  const datasetId = await owner.createDataset('page-export', fx.orgA);
  await owner.addBinaryDataToDatasetByIds(ids, datasetId);
  await owner.addBoundingBoxToImageById(ids[0], 'cup', 0.1, 0.2, 0.5, 0.6);

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1300, height: 1000 }, acceptDownloads: true });
  await page.goto(fx.cloud.webUrl);
  await page.getByLabel('API key id').fill(fx.keys.ownerA.id);
  await page.getByLabel('API key', { exact: true }).fill(fx.keys.ownerA.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').waitFor();
  await page.getByRole('navigation').getByRole('link', { name: 'Data', exact: true }).click();

  const row = page.getByTestId('export-page-export');
  await row.getByRole('button', { name: 'Make version' }).click();
  const versionSelect = page.getByLabel('version of dataset page-export');
  await versionSelect.locator('option', { hasText: 'v1 (2 images)' }).waitFor({ state: 'attached' });
  t.is(await versionSelect.inputValue(), '1');
  await page.getByLabel('export format of dataset page-export').selectOption('yolo');
  const downloading = page.waitForEvent('download');
  await row.getByRole('button', { name: 'Export' }).click();
  const download = await downloading;
  t.is(download.suggestedFilename(), 'page-export-v1-yolo.zip');
  const onPage = await readFile((await download.path())!);
  const byClient = join(dir, 'client.zip');
  await owner.exportDataset(datasetId, byClient, { version: 1, format: 'yolo' });
  t.true(onPage.equals(await readFile(byClient)), 'the page downloads the same bytes as the client');
  t.deepEqual(
    (await owner.listDatasetVersions(datasetId)).map((v) => v.imageCount),
    [2],
  );

  // The data browser's filter: component page-cam.
  await page.getByLabel('component name').fill('page-cam');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const mcapDownload = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export MCAP' }).click();
  const mcapFile = await mcapDownload;
  t.is(mcapFile.suggestedFilename(), 'data.mcap');
  const mcap = await readMcap(await readFile((await mcapFile.path())!));
  t.is(mcap.messageCount, 2n);
  t.deepEqual(mcap.schemas, ['foxglove.CompressedImage']);
});
