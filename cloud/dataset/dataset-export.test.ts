// ExportDataset through the TypeScript client against a spawned platform-cloud: the known box in
// COCO and YOLO, label ids that agree across the formats, byte-identical version exports after edits,
// and the live export following the edits.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataClient } from '../client/data-client.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyJpeg, noisyPng } from '../web/testing-images.js';

let fx: CloudFixture;
let data: DataClient;
let dir: string;
const times = () => [new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:06Z')] as [Date, Date];

test.before(async () => {
  fx = await startFixture();
  data = fx.client(fx.keys.ownerA).dataClient;
  dir = mkdtempSync(join(tmpdir(), 'dataset-export-'));
});
test.after.always(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Built {
  id: string;
  big: string;
  small: string;
  plain: string;
  bigBytes: Uint8Array;
  boxId: string;
}

async function build(name: string): Promise<Built> {
  const id = await data.createDataset(name, fx.orgA);
  const bigBytes = noisyPng(640, 480);
  const upload = (bytes: Uint8Array, ext: string, tags: string[]) =>
    data.binaryDataCaptureUpload(bytes, fx.machineA1.part_id, 'camera', `${name}-cam`, 'GetImages', ext, times(), tags);
  const big = await upload(bigBytes, '.png', ['street']);
  const small = await upload(noisyJpeg(100, 50), '.jpg', []);
  const plain = await upload(noisyPng(10, 10), '.png', ['empty']);
  await data.addBinaryDataToDatasetByIds([big, small, plain], id);
  const boxId = await data.addBoundingBoxToImageById(big, 'car', 0.1, 0.2, 0.5, 0.6);
  await data.addBoundingBoxToImageById(small, 'person', 0, 0, 0.5, 1);
  return { id, big, small, plain, bigBytes, boxId };
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

test.serial('a 640x480 box (0.1, 0.2)-(0.5, 0.6) is COCO [64, 96, 256, 192] and YOLO 0 0.3 0.4 0.4 0.4; ids agree across formats', async (t) => {
  const b = await build('known-box');
  const v = await data.createDatasetVersion(b.id, { train: 1, valid: 0, test: 0, seed: 1 });

  const cocoDir = join(dir, 'coco');
  const coco = await data.exportDataset(b.id, cocoDir, { version: v.version, format: 'coco' });
  t.true(coco.files.includes('train/_annotations.coco.json'));
  const doc = readJson(join(cocoDir, 'train/_annotations.coco.json'));
  t.deepEqual(doc.categories, [
    { id: 0, name: 'car', supercategory: 'none' },
    { id: 1, name: 'person', supercategory: 'none' },
  ]);
  const bigImage = doc.images.find((i: { binary_data_id: string }) => i.binary_data_id === b.big);
  t.like(bigImage, { width: 640, height: 480, file_name: `${b.big}.png` });
  const carBox = doc.annotations.find((a: { image_id: number }) => a.image_id === bigImage.id);
  t.deepEqual(carBox.bbox, [64, 96, 256, 192]);
  t.like(carBox, { category_id: 0, area: 49152, iscrowd: 0 });
  const smallImage = doc.images.find((i: { binary_data_id: string }) => i.binary_data_id === b.small);
  t.like(smallImage, { width: 100, height: 50 });
  t.deepEqual(doc.annotations.find((a: { image_id: number }) => a.image_id === smallImage.id).bbox, [0, 0, 50, 50]);
  t.deepEqual(new Uint8Array(readFileSync(join(cocoDir, 'train', `${b.big}.png`))), b.bigBytes);

  const yoloDir = join(dir, 'yolo');
  const yolo = await data.exportDataset(b.id, yoloDir, { version: v.version, format: 'yolo' });
  t.is(readFileSync(join(yoloDir, `labels/train/${b.big}.txt`), 'utf8'), '0 0.3 0.4 0.4 0.4\n');
  t.is(readFileSync(join(yoloDir, `labels/train/${b.small}.txt`), 'utf8'), '1 0.25 0.5 0.5 1\n');
  t.false(
    yolo.files.some((f) => f.includes(b.plain) && f.startsWith('labels/')),
    'no label file for an image without boxes',
  );
  t.true(yolo.files.includes(`images/train/${b.plain}.png`));
  const yaml = readFileSync(join(yoloDir, 'data.yaml'), 'utf8');
  t.regex(yaml, /^train: images\/train$/m);
  t.regex(yaml, /^val: images\/valid$/m);
  t.regex(yaml, /^nc: 2$/m);
  t.regex(yaml, /^names:\n {2}0: "car"\n {2}1: "person"\n/m);

  const jsonlDir = join(dir, 'jsonl');
  await data.exportDataset(b.id, jsonlDir, { version: v.version, format: 'jsonl' });
  const lines = readFileSync(join(jsonlDir, 'dataset.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.is(lines.length, 3);
  const big = lines.find((l) => l.binary_data_id === b.big);
  t.like(big, {
    image_path: `images/${b.big}.png`,
    classification_annotations: [{ annotation_label: 'street' }],
    bounding_box_annotations: [{ annotation_label: 'car', x_min_normalized: 0.1, y_min_normalized: 0.2, x_max_normalized: 0.5, y_max_normalized: 0.6 }],
    timestamp: '2026-01-02T03:04:05.000Z',
    organization_id: fx.orgA,
    part_id: fx.machineA1.part_id,
    split: 'train',
    width: 640,
    height: 480,
  });
  t.deepEqual(new Uint8Array(readFileSync(join(jsonlDir, big.image_path))), b.bigBytes);
  // The same label list, in the same order, in all three.
  for (const folder of [cocoDir, yoloDir, jsonlDir]) t.is(readFileSync(join(folder, 'labels.txt'), 'utf8'), 'car\nperson\n');
  const jsonlLabels = [...new Set(lines.flatMap((l) => l.bounding_box_annotations.map((a: { annotation_label: string }) => a.annotation_label)))].sort();
  t.deepEqual(jsonlLabels, ['car', 'person']);
});

test.serial('edits after a version leave its export byte-identical; the live export follows them', async (t) => {
  const b = await build('identical');
  const v = await data.createDatasetVersion(b.id, { train: 0.34, valid: 0.33, test: 0.33, seed: 5 });
  const zips = async (tag: string, version: number) => {
    const out: Record<string, Buffer> = {};
    for (const format of ['jsonl', 'coco', 'yolo'] as const) {
      const path = join(dir, `${tag}-${format}.zip`);
      await data.exportDataset(b.id, path, { version, format });
      out[format] = readFileSync(path);
    }
    return out;
  };
  const before = await zips('before', v.version);
  await data.addTagsToBinaryDataByIds(['later'], [b.big]);
  await data.removeBoundingBoxFromImageById(b.big, b.boxId);
  await data.addBoundingBoxToImageById(b.plain, 'tree', 0.2, 0.2, 0.4, 0.4);
  await data.removeBinaryDataFromDatasetByIds([b.small], b.id);
  await data.deleteBinaryDataByIds([b.plain]);
  const after = await zips('after', v.version);
  for (const format of ['jsonl', 'coco', 'yolo']) t.true(before[format].equals(after[format]), `${format} export changed`);

  const liveDir = join(dir, 'live');
  await data.exportDataset(b.id, liveDir, { format: 'jsonl' });
  const live = readFileSync(join(liveDir, 'dataset.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.deepEqual(
    live.map((l) => l.binary_data_id),
    [b.big],
  );
  t.deepEqual(live[0].classification_annotations, [{ annotation_label: 'later' }, { annotation_label: 'street' }]);
  t.deepEqual(live[0].bounding_box_annotations, []);
});

test.serial('bad requests: unknown format, version or dataset; another organization', async (t) => {
  const id = await data.createDataset('export-rules', fx.orgA);
  const bad = await t.throwsAsync(data.exportDataset(id, join(dir, 'x.zip'), { format: 0 as never }));
  t.is(codeOf(bad), status.INVALID_ARGUMENT);
  t.regex(bad!.message, /format must be DATASET_FORMAT_JSONL/);
  await t.throwsAsync(data.exportDataset(id, join(dir, 'x.zip'), { format: 'tar' as never }), { message: /format must be 'jsonl', 'coco' or 'yolo'/ });
  t.is(codeOf(await t.throwsAsync(data.exportDataset(id, join(dir, 'x.zip'), { version: 3, format: 'coco' }))), status.NOT_FOUND);
  t.is(codeOf(await t.throwsAsync(data.exportDataset('missing', join(dir, 'x.zip'), { format: 'coco' }))), status.NOT_FOUND);
  const other = fx.client(fx.keys.ownerB).dataClient;
  t.is(codeOf(await t.throwsAsync(other.exportDataset(id, join(dir, 'y'), { format: 'yolo' }))), status.PERMISSION_DENIED);
  // An empty dataset exports an empty but valid layout.
  const empty = await data.exportDataset(id, join(dir, 'empty'), { format: 'yolo' });
  t.deepEqual(empty.files.sort(), ['data.yaml', 'labels.txt']);
});
