// Training reads a job's frozen dataset version, not the live dataset: later tag, box and delete edits
// do not reach it, and the content of a datum deleted after the version was made is still readable.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../store/store.js';
import { noisyPng } from '../web/testing-images.js';
import { CloudTrainingDataSource } from './cloud-data-source.js';

test('a version freezes what training reads; a job without one gets one made', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cloud-data-source-'));
  const store = await Store.open(dir, { readers: 1, insertLanes: 0 });
  try {
    const org = 'org1';
    await store.execute(`INSERT INTO datasets VALUES ('ds', 'cats', ?, now())`, [org]);
    const images = { a: Buffer.from(noisyPng(8, 6, 1)), b: Buffer.from(noisyPng(4, 4, 2)) };
    let seq = 0;
    for (const [id, bytes] of Object.entries(images)) {
      await store.blobs.put(`${org}/${id}`, bytes);
      await store.execute(
        `INSERT INTO binary_data (seq, binary_data_id, organization_id, part_id, mime_type, file_ext, tags, dataset_ids, blob_key, file_size_bytes)
         VALUES (?, ?, ?, 'p1', 'image/png', '.png', ['cat', 'PLATFORM_DATASET_ds'], ['ds'], ?, ?)`,
        [++seq, id, org, `${org}/${id}`, bytes.length],
      );
    }
    await store.execute(`INSERT INTO bounding_boxes VALUES ('box1', 'a', 'ear', 0.1, 0.2, 0.3, 0.4, NULL)`);
    const source = new CloudTrainingDataSource(store);
    const version = await source.datasetVersion(org, 'ds', 0);
    t.is(version, 1);
    const frozen = await source.listImages(org, 'ds', version);

    // The live dataset changes: a new tag, the box gone, image b deleted (its blob stays, as a delete
    // keeps the content a version froze).
    await store.execute(`UPDATE binary_data SET tags = ['dog', 'PLATFORM_DATASET_ds'] WHERE binary_data_id = 'a'`);
    await store.execute(`DELETE FROM bounding_boxes WHERE id = 'box1'`);
    await store.execute(`DELETE FROM binary_data WHERE binary_data_id = 'b'`);

    t.deepEqual(await source.listImages(org, 'ds', version), frozen);
    t.deepEqual(
      frozen.map((i) => [i.binaryDataId, i.tags, i.boundingBoxes.map((b) => b.label)]),
      [
        ['a', ['cat'], ['ear']],
        ['b', ['cat'], []],
      ],
    );
    const live = await source.listImages(org, 'ds');
    t.deepEqual(
      live.map((i) => [i.binaryDataId, i.tags.filter((x) => !x.startsWith('PLATFORM_')), i.boundingBoxes.length]),
      [['a', ['dog'], 0]],
    );
    t.deepEqual(await source.readImage(org, 'b'), images.b, 'a frozen datum deleted since is still readable');
    t.is(await source.datasetVersion(org, 'ds', 1), 1);
    t.is(await source.datasetVersion(org, 'ds', 0), 2, 'a job naming no version gets a new one');
    await t.throwsAsync(source.datasetVersion(org, 'ds', 9), { message: /dataset ds has no version 9/ });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
