// Issue 36, the data browser's image upload, in a real browser (headless Debian chromium) against the real
// platform-cloud: images dropped on the page (a real drop event carrying files) are stored byte for byte
// with the typed tags, a file the web port refuses shows its refusal while the others go through, and an
// operator key's upload is refused in the cloud's words.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { eventually } from '../../core/serving/testing/eventually.js';
import { signedInView } from '../testing/signed-in-view.js';
import { startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyPng } from './testing-images.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The web port forwards messages up to this size here, so one test file can be too large to upload. */
const MAX_REQUEST = 300_000;

let fx: CloudFixture;

test.before(async () => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
  fx = await startFixture({ PLATFORM_WEB_MAX_REQUEST_BYTES: String(MAX_REQUEST) });
});

test.after.always(async () => {
  await fx?.close();
});

interface DroppedFile {
  name: string;
  type: string;
  bytes: Uint8Array;
}

/** Drops the files on the page's drop zone as a user's drag from the desktop would (a DataTransfer of Files). */
async function drop(page: Page, files: DroppedFile[]): Promise<void> {
  const data = files.map((f) => ({ name: f.name, type: f.type, bytes: [...f.bytes] }));
  const transfer = await page.evaluateHandle((list) => {
    // This file is type-checked without the DOM library.
    const g = globalThis as unknown as {
      DataTransfer: new () => { items: { add(f: unknown): void } };
      File: new (parts: unknown[], name: string, options: { type: string }) => unknown;
    };
    const dt = new g.DataTransfer();
    for (const f of list) dt.items.add(new g.File([new Uint8Array(f.bytes)], f.name, { type: f.type }));
    return dt;
  }, data);
  const zone = page.getByTestId('drop-zone');
  await zone.dispatchEvent('dragover', { dataTransfer: transfer });
  await zone.dispatchEvent('drop', { dataTransfer: transfer });
}

const summary = (page: Page) => page.getByTestId('upload-summary').innerText();

test.serial('dropped images are uploaded for the chosen part with the typed tags; a refused file shows why and the others go through', async (t) => {
  const page = await signedInView(t, fx.cloud.webUrl, fx.keys.ownerA, 'Data');
  const part = page.locator('select[name=uploadPart]');
  await eventually(
    () => part.locator('option').count(),
    (n) => n === 2,
    { what: 'the two parts of organization A' },
  );
  await part.selectOption(fx.machineA1.part_id);
  await page.getByLabel('upload tags').fill(' field, day1,,field ');
  const small = { name: 'a.png', type: 'image/png', bytes: noisyPng(64, 48, 1) };
  const other = { name: 'b.png', type: 'image/png', bytes: noisyPng(80, 60, 2) };
  const huge = { name: 'huge.png', type: 'image/png', bytes: noisyPng(400, 300, 3) };
  t.true(huge.bytes.length > MAX_REQUEST);
  await drop(page, [small, huge, other]);
  await eventually(
    () => summary(page),
    (s) => s.startsWith('3 of 3 files'),
    { what: 'all three files done' },
  );
  t.regex(await summary(page), /, 1 failed$/);
  const items = await page.getByTestId('upload-item').allInnerTexts();
  t.regex(items[0], /^a\.png \(\d+\.\d KB\): uploaded as \S+/);
  t.regex(items[1], /^huge\.png .*: failed .*PLATFORM_WEB_MAX_REQUEST_BYTES/);
  t.regex(items[2], /^b\.png .*: uploaded as \S+/);

  // What the cloud stored, read back with the TypeScript client: the bytes, names, part and tags.
  const ids = items.filter((i) => /uploaded as/.test(i)).map((i) => /uploaded as (\S+)$/.exec(i)![1]);
  const stored = await fx.client(fx.keys.ownerA).dataClient.binaryDataByIds(ids, { includeBinary: true });
  t.is(stored.length, 2);
  for (const [i, sent] of [small, other].entries()) {
    const d = stored.find((s) => s.metadata.fileName === sent.name)!;
    t.truthy(d, sent.name);
    t.deepEqual(new Uint8Array(d.binary), sent.bytes, `${sent.name} byte for byte`);
    t.is(d.metadata.captureMetadata?.partId, fx.machineA1.part_id);
    t.deepEqual([...(d.metadata.captureMetadata?.tags ?? [])].sort(), ['day1', 'field'], `tags of file ${i}`);
  }
  // The grid is read again: both images are there with their tags; the refused one is not.
  const grid = page.getByTestId('image-grid');
  await eventually(
    () => grid.getByTestId('image-tile').count(),
    (n) => n === 2,
    { what: 'two tiles' },
  );
  t.regex(await grid.innerText(), /field/);
  t.regex(await grid.innerText(), /day1/);
});

test.serial('an operator key’s upload is refused in the cloud’s words and nothing is stored', async (t) => {
  const before = await fx.client(fx.keys.ownerA).dataClient.binaryDataByFilter({}, { limit: 100, includeBinary: false });
  const page = await signedInView(t, fx.cloud.webUrl, fx.keys.operatorA, 'Data');
  await eventually(
    () => page.locator('select[name=uploadPart]').locator('option').count(),
    (n) => n === 2,
    { what: 'the parts' },
  );
  await page.locator('.upload input[type=file]').setInputFiles({ name: 'c.png', mimeType: 'image/png', buffer: Buffer.from(noisyPng(32, 32, 4)) });
  await eventually(
    () => summary(page),
    (s) => s.startsWith('1 of 1 files'),
    { what: 'the file done' },
  );
  t.regex((await page.getByTestId('upload-item').allInnerTexts())[0], /^c\.png .*: failed .*PERMISSION_DENIED|^c\.png .*: failed .*gRPC status 7/);
  const after = await fx.client(fx.keys.ownerA).dataClient.binaryDataByFilter({}, { limit: 100, includeBinary: false });
  t.is(after.data.length, before.data.length);
});
