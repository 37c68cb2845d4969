import test from 'ava';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportDataset } from './dataset-export.js';
import { MemoryDataSource } from './testing/memory-data-source.js';

const box = (label: string) => ({ label, xMinNormalized: 0.1, yMinNormalized: 0.2, xMaxNormalized: 0.5, yMaxNormalized: 0.6 });

test('export keeps every image, only the wanted labels, and never dataset membership tags', async (t) => {
  const folder = await mkdtemp(join(tmpdir(), 'export-'));
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  const source = new MemoryDataSource();
  const id = source.addDataset('org', [
    { png: Buffer.from('a'), tags: ['red', 'shiny', 'PLATFORM_DATASET_x'], boxes: [box('red'), box('cat')] },
    { png: Buffer.from('b'), tags: ['blue'] },
    { png: Buffer.from('c'), tags: [] },
  ]);
  const exported = await exportDataset(source, 'org', id, folder, ['red', 'green']);
  t.is(exported.images, 3);
  t.deepEqual(exported.labelCounts, { red: { images: 1, boxes: 1 }, green: { images: 0, boxes: 0 } });
  const lines = (await readFile(exported.datasetFile, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.deepEqual(lines[0].classification_annotations, [{ annotation_label: 'red' }]);
  t.deepEqual(lines[0].bounding_box_annotations, [
    { annotation_label: 'red', x_min_normalized: 0.1, y_min_normalized: 0.2, x_max_normalized: 0.5, y_max_normalized: 0.6 },
  ]);
  t.deepEqual(lines[1].classification_annotations, []); // a negative example
  t.is(await readFile(join(folder, lines[2].image_path), 'utf8'), 'c');
  t.is((await readdir(join(folder, 'images'))).length, 3);

  const all = await exportDataset(source, 'org', id, join(folder, 'all'), undefined);
  t.deepEqual(Object.keys(all.labelCounts).sort(), ['blue', 'cat', 'red', 'shiny']);
});
