// The data browser in a real browser (headless Debian chromium): the real platform-cloud serves it, the
// page signs in and calls through gRPC-Web, and the test checks the effects through the TypeScript client.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../core/serving/testing/chromium.js';
import { eventually } from '../../core/serving/testing/eventually.js';
import { startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyPng } from './testing-images.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Screenshots land in the ignored test-output folder; cloud/web/README.md shows copies of them. */
const SHOTS = join(ROOT, '.platform-test', 'web');

let fx: CloudFixture;

test.before(async () => {
  // The page's bundle, as `npm run build` makes it (esbuild; a second or two).
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-web.mjs')], { stdio: 'inherit' });
  mkdirSync(SHOTS, { recursive: true });
  fx = await startFixture();
});

test.after.always(async () => {
  await fx?.close();
});

async function upload(name: string, width: number, height: number, seed: number, tags: string[] = []): Promise<{ id: string; bytes: number }> {
  const png = noisyPng(width, height, seed);
  const now = new Date();
  const id = await fx
    .partClient(fx.machineA1)
    .dataClient.binaryDataCaptureUpload(png, fx.machineA1.part_id, 'camera', name, 'ReadImage', '.png', [now, now], tags);
  return { id, bytes: png.length };
}

test.serial('sign in with a wrong key shows the cloud’s refusal; the right key opens the data view, keeping the key only in sessionStorage', async (t) => {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  await page.goto(fx.cloud.webUrl);
  await page.getByLabel('API key id').fill(fx.keys.ownerA.id);
  await page.getByLabel('API key', { exact: true }).fill('not-the-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  t.regex(await page.getByRole('alert').innerText(), /invalid credentials for entity/);
  await page.screenshot({ path: join(SHOTS, 'cloud-sign-in.png') });

  await page.getByLabel('API key', { exact: true }).fill(fx.keys.ownerA.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').waitFor();
  t.regex(await page.getByTestId('signed-in').innerText(), new RegExp(fx.keys.ownerA.id));
  // The form does not ask for the organization: the page found the key's own with ListOrganizations.
  t.regex(await page.getByTestId('signed-in').innerText(), new RegExp(`org ${fx.orgA}`));
  const storage = await page.evaluate(() => {
    // This file is type-checked without the DOM library.
    const w = globalThis as unknown as { localStorage: object; sessionStorage: object };
    return { local: JSON.stringify({ ...w.localStorage }), session: JSON.stringify({ ...w.sessionStorage }) };
  });
  t.false(storage.local.includes(fx.keys.ownerA.key), 'the key is not in localStorage');
  t.is(storage.local, '{}');
  t.true(storage.session.includes(fx.keys.ownerA.key), 'the key is in sessionStorage');
  // Cookies neither.
  t.deepEqual(await page.context().cookies(), []);
});

test.serial('an uploaded image appears in the grid with its box and tags, from thumbnails only; a box drawn on the page is stored', async (t) => {
  const owner = fx.client(fx.keys.ownerA).dataClient;
  const big = await upload('cam-big', 800, 600, 7, ['field']);
  await owner.addBoundingBoxToImageById(big.id, 'rock', 0.1, 0.2, 0.5, 0.6);
  const other = await upload('cam-small', 480, 360, 9);
  // Another organization's image must never appear.
  const now = new Date();
  await fx
    .partClient(fx.machineB)
    .dataClient.binaryDataCaptureUpload(noisyPng(64, 48, 3), fx.machineB.part_id, 'camera', 'cam-b', 'ReadImage', '.png', [now, now]);

  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // Every byte the page receives, by URL.
  const received: { url: string; bytes: number }[] = [];
  page.on('response', (response) => {
    void response.body().then(
      (body) => received.push({ url: response.url(), bytes: body.length }),
      () => undefined,
    );
  });
  await page.goto(fx.cloud.webUrl);
  await page.getByLabel('API key id').fill(fx.keys.ownerA.id);
  await page.getByLabel('API key', { exact: true }).fill(fx.keys.ownerA.key);
  await page.getByRole('button', { name: 'Sign in' }).click();

  const grid = page.getByTestId('image-grid');
  const bigTile = grid.locator(`[data-id="${big.id}"]`);
  await bigTile.getByRole('img').waitFor();
  await grid.locator(`[data-id="${other.id}"]`).getByRole('img').waitFor();
  t.is(await grid.getByTestId('image-tile').count(), 2, "only the organization's own images");
  await bigTile.getByTestId('bbox-rock').waitFor();
  t.regex(await bigTile.innerText(), /field/);
  // The thumbnail is grid-sized: 160 px wide for an 800 px image.
  // (naturalWidth is 0 until the thumbnail has loaded.)
  const width = await eventually(
    () => bigTile.getByRole('img').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
    (w) => w > 0,
  );
  t.is(width, 160);
  await page.screenshot({ path: join(SHOTS, 'cloud-data-grid.png'), fullPage: true });

  // Thumbnails, not content: two thumbnail requests at grid size, and far fewer bytes than either image.
  // (`received` fills as each body is read back from the browser, after its tile has shown it.)
  const thumbs = await eventually(
    () => received.filter((r) => r.url.includes('/thumbnails/')),
    (list) => list.length >= 2,
    { what: 'both thumbnails received' },
  );
  t.deepEqual(thumbs.map((r) => new URL(r.url).searchParams.get('size')).sort(), ['160', '160']);
  const total = received
    .filter((r) => !/\.(js|css|map|html)$/.test(new URL(r.url).pathname) && new URL(r.url).pathname !== '/')
    .reduce((s, r) => s + r.bytes, 0);
  t.true(total < big.bytes / 10 && total < other.bytes, `the grid received ${total} bytes; the images are ${big.bytes} and ${other.bytes}`);

  // Draw a box over the detail image: from 25 %/25 % to 75 %/50 % of it.
  await bigTile.getByRole('button', { name: /^open / }).click();
  const detail = page.getByTestId('image-detail');
  const img = detail.getByRole('img');
  await img.waitFor();
  await detail.getByTestId('bbox-rock').waitFor();
  // The <img> has no size of its own until its image has loaded: the box is measured after that.
  await eventually(
    () =>
      img.evaluate((i) => {
        const loaded = i as unknown as { complete: boolean; naturalWidth: number };
        return loaded.complete && loaded.naturalWidth > 0;
      }),
    (loaded) => loaded,
    { what: 'the detail image loaded' },
  );
  const box = (await img.boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.25, box.y + box.height * 0.25);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.4, { steps: 4 });
  await page.mouse.move(box.x + box.width * 0.75, box.y + box.height * 0.5, { steps: 4 });
  await page.mouse.up();
  await detail.getByLabel('box label').fill('tree');
  await detail.getByRole('button', { name: 'Save box' }).click();
  await detail.getByTestId('bbox-tree').waitFor();
  await bigTile.getByTestId('bbox-tree').waitFor();
  await page.screenshot({ path: join(SHOTS, 'cloud-data-box.png'), fullPage: true });

  // Stored: the TypeScript client reads it back, where it was drawn.
  const [stored] = await owner.binaryDataByIds([big.id], { includeBinary: false });
  const tree = stored.metadata.annotations!.bboxes.find((b) => b.label === 'tree');
  t.truthy(tree, 'the drawn box is stored');
  t.true(Math.abs(tree!.xMinNormalized - 0.25) < 0.02 && Math.abs(tree!.xMaxNormalized - 0.75) < 0.02, JSON.stringify(tree));
  t.true(Math.abs(tree!.yMinNormalized - 0.25) < 0.02 && Math.abs(tree!.yMaxNormalized - 0.5) < 0.02, JSON.stringify(tree));

  // Removing the old box through the page removes it in the cloud.
  await detail.getByRole('button', { name: 'remove box rock' }).click();
  await detail.getByTestId('bbox-rock').waitFor({ state: 'detached' });
  const [after] = await owner.binaryDataByIds([big.id], { includeBinary: false });
  t.deepEqual(
    after.metadata.annotations!.bboxes.map((b) => b.label),
    ['tree'],
  );
});

async function signedIn(page: Page): Promise<void> {
  await page.goto(fx.cloud.webUrl);
  await page.getByLabel('API key id').fill(fx.keys.ownerA.id);
  await page.getByLabel('API key', { exact: true }).fill(fx.keys.ownerA.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('signed-in').waitFor();
}

test.serial(
  'filters by component, time, tags, labels and dataset; tags added and removed; datasets created, filled, renamed and deleted — all checked through the API',
  async (t) => {
    const owner = fx.client(fx.keys.ownerA).dataClient;
    const day = await upload('filter-day', 64, 48, 11, ['day']);
    const dog = await upload('filter-dog', 64, 48, 12);
    await owner.addBoundingBoxToImageById(dog.id, 'dog', 0, 0, 1, 1);
    const plain = await upload('filter-plain', 64, 48, 13);

    const browser = await launchChromium();
    t.teardown(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await signedIn(page);
    const grid = page.getByTestId('image-grid');
    const tile = (id: string) => grid.locator(`[data-id="${id}"]`);
    await tile(plain.id).getByRole('img').waitFor();
    const shown = async () => (await grid.getByTestId('image-tile').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))).sort();
    const filters = page.getByRole('form', { name: 'filters' });
    const apply = async (label: string, value: string) => {
      await filters.getByRole('button', { name: 'Clear' }).click();
      await filters.getByLabel(label).fill(value);
      await filters.getByRole('button', { name: 'Apply filters' }).click();
    };

    await apply('component name', 'filter-dog');
    await eventually(shown, (ids) => ids.length === 1);
    t.deepEqual(await shown(), [dog.id]);
    await apply('tags (any of)', 'day');
    await eventually(shown, (ids) => ids.length === 1 && ids[0] === day.id);
    await apply('box labels (any of)', 'dog');
    await eventually(shown, (ids) => ids.length === 1 && ids[0] === dog.id);
    // Captured after a time in the future: nothing.
    await apply('from', '2999-01-01T00:00');
    await page.getByText('No images match.').waitFor();
    // Captured before a time in the future: everything (at least our three).
    await apply('to', '2999-01-01T00:00');
    await eventually(shown, (ids) => [day.id, dog.id, plain.id].every((id) => ids.includes(id)));

    // Tag two selected images, then untag one of them.
    await tile(dog.id).getByRole('checkbox').check();
    await tile(plain.id).getByRole('checkbox').check();
    t.is(await page.getByTestId('selected-count').innerText(), '2 selected');
    const selection = page.getByLabel('selection');
    await selection.getByLabel('tag').fill('night');
    await selection.getByRole('button', { name: 'Tag selected', exact: true }).click();
    await tile(plain.id).getByText('night').waitFor();
    // The user's tags (dataset membership is also a PLATFORM_DATASET_<id> tag).
    const tagsOf = async (id: string) =>
      (await owner.binaryDataByIds([id], { includeBinary: false }))[0].metadata.captureMetadata!.tags.filter((tag) => !tag.startsWith('PLATFORM_DATASET_'));
    t.deepEqual(await tagsOf(dog.id), ['night']);
    t.deepEqual(await tagsOf(plain.id), ['night']);

    // A dataset of the two selected images.
    const datasets = page.getByRole('region', { name: 'datasets' });
    await datasets.getByLabel('new dataset').fill('picked');
    await datasets.getByRole('button', { name: 'Create dataset' }).click();
    await datasets.getByTestId('dataset-picked').getByRole('button', { name: 'Add 2 selected' }).click();
    const inDataset = async (id: string) =>
      (await owner.binaryDataByFilter({ datasetId: id }, { includeBinary: false })).data.map((d) => d.metadata.binaryDataId).sort();
    const [picked] = await eventually(
      () => owner.listDatasetsByOrganizationID(fx.orgA),
      (list) => list.length === 1,
    );
    t.is(picked.name, 'picked');
    t.deepEqual(
      await eventually(
        () => inDataset(picked.id),
        (ids) => ids.length === 2,
      ),
      [dog.id, plain.id].sort(),
    );
    // The grid names the dataset on its images.
    await tile(dog.id).getByText('picked').waitFor();

    // Untag one from its detail panel; tag another there.
    await tile(plain.id)
      .getByRole('button', { name: /^open / })
      .click();
    const detail = page.getByTestId('image-detail');
    await detail.getByRole('button', { name: 'remove tag night' }).click();
    await detail.getByTestId('detail-tags').getByText('night').waitFor({ state: 'detached' });
    await detail.getByLabel('new tag').fill('checked');
    await detail.getByRole('button', { name: 'Add tag' }).click();
    await detail.getByTestId('detail-tags').getByText('checked').waitFor();
    t.deepEqual(await tagsOf(plain.id), ['checked']);
    t.deepEqual(await tagsOf(dog.id), ['night']);

    // Filter by the dataset, then rename it and delete it.
    await filters.getByRole('button', { name: 'Clear' }).click();
    await filters.getByLabel('dataset').selectOption({ label: 'picked' });
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await eventually(shown, (ids) => ids.length === 2);
    t.deepEqual(await shown(), [dog.id, plain.id].sort());
    await page.screenshot({ path: join(SHOTS, 'cloud-data-dataset.png'), fullPage: true });

    // Untag through the selection.
    await tile(dog.id).getByRole('checkbox').check();
    await selection.getByLabel('tag').fill('night');
    await selection.getByRole('button', { name: 'Untag selected' }).click();
    await tile(dog.id).getByText('night').waitFor({ state: 'detached' });
    t.deepEqual(await tagsOf(dog.id), []);

    await datasets.getByLabel('name of dataset picked').fill('chosen');
    await datasets.getByTestId('dataset-picked').getByRole('button', { name: 'Rename' }).click();
    await datasets.getByTestId('dataset-chosen').waitFor();
    t.deepEqual(
      (await owner.listDatasetsByOrganizationID(fx.orgA)).map((d) => d.name),
      ['chosen'],
    );
    page.once('dialog', (dialog) => void dialog.accept());
    await datasets.getByTestId('dataset-chosen').getByRole('button', { name: 'Delete' }).click();
    await datasets.getByTestId('dataset-chosen').waitFor({ state: 'detached' });
    t.deepEqual(await owner.listDatasetsByOrganizationID(fx.orgA), []);
    // The images stay.
    t.is((await owner.binaryDataByIds([dog.id, plain.id], { includeBinary: false })).length, 2);
  },
);

test.serial('an operator key sees the images but its writes are refused in the cloud’s words', async (t) => {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(fx.cloud.webUrl);
  await page.getByLabel('API key id').fill(fx.keys.operatorA.id);
  await page.getByLabel('API key', { exact: true }).fill(fx.keys.operatorA.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const grid = page.getByTestId('image-grid');
  await grid.getByTestId('image-tile').first().getByRole('img').waitFor();
  const datasets = page.getByRole('region', { name: 'datasets' });
  await datasets.getByLabel('new dataset').fill('not allowed');
  await datasets.getByRole('button', { name: 'Create dataset' }).click();
  t.regex(await page.getByRole('alert').innerText(), /is an operator; this call needs the owner role/);
  t.deepEqual(await fx.client(fx.keys.ownerA).dataClient.listDatasetsByOrganizationID(fx.orgA), []);
});

test.serial('an answer that comes back late never overwrites a newer one: a tag removed stays removed when an earlier refresh answers after it', async (t) => {
  const late = await upload('cam-late', 64, 48, 21, ['stale']);
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // The first re-read of the shown images (after adding a tag) is answered by the cloud at once, but its
  // answer reaches the page only once released; the next one (after removing a tag) goes straight through.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held: Promise<void> | undefined;
  let reads = 0;
  await page.route('**/platform.app.data.v1.DataService/BinaryDataByIDs', async (route) => {
    if (++reads > 1) return route.continue();
    held = (async () => {
      const response = await route.fetch();
      await released;
      await route.fulfill({ response });
    })();
    await held;
  });
  await page.goto(fx.cloud.webUrl);
  await page.getByLabel('API key id').fill(fx.keys.ownerA.id);
  await page.getByLabel('API key', { exact: true }).fill(fx.keys.ownerA.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const tile = page.getByTestId('image-grid').locator(`[data-id="${late.id}"]`);
  await tile.getByRole('img').waitFor();
  await tile.getByRole('button', { name: /^open / }).click();
  const detail = page.getByTestId('image-detail');
  const tags = detail.getByTestId('detail-tags');

  await detail.getByLabel('new tag').fill('first');
  await detail.getByRole('button', { name: 'Add tag' }).click();
  await eventually(
    async () => reads,
    (n) => n === 1,
  );
  await detail.getByRole('button', { name: 'remove tag stale' }).click();
  await tags.getByText('first').waitFor();
  await tags.getByText('stale').waitFor({ state: 'detached' });
  // Now the first answer (from before the removal, still saying "stale") arrives.
  const finished = page.waitForEvent('requestfinished', (r) => r.url().endsWith('/BinaryDataByIDs'));
  release();
  await held;
  await finished;
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
  t.is(await tags.getByText('stale').count(), 0, 'the late answer did not bring the removed tag back');
  t.deepEqual((await fx.client(fx.keys.ownerA).dataClient.binaryDataByIds([late.id], { includeBinary: false }))[0].metadata.captureMetadata?.tags, ['first']);
});
