// ImportDataset through the TypeScript client against a spawned platform-cloud: COCO and YOLO round
// trips (export, then import: the same boxes and labels), and bad input refused with the file and the
// reason, with nothing imported, no blob left behind and no file written outside the import.
import { status } from '@grpc/grpc-js';
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataClient } from '../client/data-client.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyJpeg, noisyPng } from '../web/testing-images.js';
import { rawZip, zeroBomb, type RawEntry } from './testing/raw-zip.js';

let fx: CloudFixture;
let data: DataClient;
let dir: string;
const times = () => [new Date(), new Date()] as [Date, Date];
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

test.before(async () => {
  fx = await startFixture();
  data = fx.client(fx.keys.ownerA).dataClient;
  dir = mkdtempSync(join(tmpdir(), 'dataset-import-'));
});
test.after.always(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Boxes = Record<string, string[]>;

/** Each image's boxes, keyed by the hash of its bytes (import gives new ids, the bytes stay). */
async function boxesByContent(datasetId: string): Promise<Boxes> {
  const out: Boxes = {};
  for (const record of (await data.binaryDataByFilter({ datasetId }, { limit: 100 })).data) {
    out[sha(record.binary)] = (record.metadata.annotations?.bboxes ?? [])
      .map((b) => `${b.label} ${[b.xMinNormalized, b.yMinNormalized, b.xMaxNormalized, b.yMaxNormalized].map((v) => v.toFixed(9)).join(' ')}`)
      .sort();
  }
  return out;
}

async function source(name: string): Promise<string> {
  const id = await data.createDataset(name, fx.orgA);
  const up = (bytes: Uint8Array, ext: string) => data.binaryDataCaptureUpload(bytes, fx.machineA1.part_id, 'camera', name, 'GetImages', ext, times());
  const a = await up(noisyPng(640, 480, 3), '.png');
  const b = await up(noisyJpeg(120, 90, 4), '.jpg');
  const c = await up(noisyPng(20, 20, 5), '.png');
  await data.addBinaryDataToDatasetByIds([a, b, c], id);
  await data.addBoundingBoxToImageById(a, 'car', 0.1, 0.2, 0.5, 0.6);
  await data.addBoundingBoxToImageById(a, 'person', 0.25, 0.125, 0.75, 1);
  await data.addBoundingBoxToImageById(b, 'person', 0, 0, 1, 1);
  return id;
}

test.serial('COCO round trip: export a version as a zip, import it, same boxes and labels', async (t) => {
  const from = await source('rt-coco-src');
  const v = await data.createDatasetVersion(from, { train: 0.34, valid: 0.33, test: 0.33, seed: 2 });
  const zip = join(dir, 'coco.zip');
  await data.exportDataset(from, zip, { version: v.version, format: 'coco' });
  const into = await data.createDataset('rt-coco-dst', fx.orgA);
  const res = await data.importDataset(into, zip, 'coco', fx.machineA1.part_id);
  t.like(res, { imageCount: 3, boundingBoxCount: 3 });
  t.deepEqual(await boxesByContent(into), await boxesByContent(from));
  const labels = await data.boundingBoxLabelsByFilter({ datasetId: into });
  t.deepEqual([...labels].sort(), ['car', 'person']);
});

test.serial('YOLO round trip from an exported folder', async (t) => {
  const from = await source('rt-yolo-src');
  const folder = join(dir, 'yolo-folder');
  await data.exportDataset(from, folder, { format: 'yolo' });
  const into = await data.createDataset('rt-yolo-dst', fx.orgA);
  const res = await data.importDataset(into, folder, 'yolo', fx.machineA1.part_id);
  t.like(res, { imageCount: 3, boundingBoxCount: 3 });
  t.deepEqual(await boxesByContent(into), await boxesByContent(from));
});

const blobCount = () => {
  const root = join(fx.cloud.dataDir, 'blobs', fx.orgA);
  return existsSync(root) ? readdirSync(root).length : 0;
};

async function refused(t: ExecutionContext, entries: RawEntry[], format: 'coco' | 'yolo', expected: RegExp): Promise<void> {
  const into = await data.createDataset(`refused-${Math.random().toString(36).slice(2)}`, fx.orgA);
  const zip = join(dir, `bad-${Math.random().toString(36).slice(2)}.zip`);
  writeFileSync(zip, rawZip(entries));
  const blobs = blobCount();
  const err = await t.throwsAsync(data.importDataset(into, zip, format, fx.machineA1.part_id));
  t.is(codeOf(err), status.INVALID_ARGUMENT, err?.message);
  t.regex(err!.message, expected);
  t.deepEqual((await data.binaryDataByFilter({ datasetId: into })).data, [], 'nothing half-imported');
  t.is(blobCount(), blobs, 'no blob left behind');
  t.deepEqual(readdirSync(join(fx.cloud.dataDir, 'imports')), [], 'the temp zip is gone');
}

const png = (w: number, h: number) => Buffer.from(noisyPng(w, h));
/** Indented as trainers write it: annotations[0] starts on line 11. */
const coco = (bbox: number[]) =>
  JSON.stringify(
    {
      images: [{ id: 1, file_name: 'a.png', width: 100, height: 50 }],
      annotations: [{ id: 7, image_id: 1, category_id: 0, bbox }],
      categories: [{ id: 0, name: 'thing' }],
    },
    null,
    1,
  );

test.serial('a COCO box outside its image is refused naming the file and the annotation', async (t) => {
  await refused(
    t,
    [
      { name: 'train/_annotations.coco.json', data: Buffer.from(coco([90, 10, 20, 10])) },
      { name: 'train/a.png', data: png(100, 50) },
    ],
    'coco',
    /train\/_annotations\.coco\.json: line 11: annotations\[0\] \(id 7\)\.bbox \[90, 10, 20, 10\] is outside its 100x50 image/,
  );
  // JSON that does not parse: the line of the error.
  await refused(
    t,
    [
      { name: 'train/_annotations.coco.json', data: Buffer.from('{\n "images": [\n  {"id": 1}\n  {"id": 2}\n ]\n}') },
      { name: 'train/a.png', data: png(100, 50) },
    ],
    'coco',
    /train\/_annotations\.coco\.json: line 4: is not valid JSON/,
  );
  // A declared size that the image header contradicts.
  await refused(
    t,
    [
      { name: 'train/_annotations.coco.json', data: Buffer.from(coco([1, 1, 2, 2])) },
      { name: 'train/a.png', data: png(64, 64) },
    ],
    'coco',
    /train\/_annotations\.coco\.json: says train\/a\.png is 100x50, but its header says 64x64/,
  );
});

const yolo = (line: string, extra: RawEntry[] = []): RawEntry[] => [
  { name: 'data.yaml', data: Buffer.from('train: images/train\nnames:\n  0: thing\n') },
  { name: 'images/train/a.png', data: png(10, 10) },
  { name: 'labels/train/a.txt', data: Buffer.from(`0 0.5 0.5 0.2 0.2\n${line}\n`) },
  ...extra,
];

test.serial('a YOLO line out of range is refused naming the file and line', async (t) => {
  await refused(t, yolo('0 1.5 0.5 0.2 0.2'), 'yolo', /labels\/train\/a\.txt: line 2: x_center 1\.5 is outside \[0, 1\]/);
  await refused(t, yolo('3 0.5 0.5 0.2 0.2'), 'yolo', /labels\/train\/a\.txt: line 2: class 3 is not in 0\.\.0/);
  await refused(t, yolo('0 0.5 0.5 0.2'), 'yolo', /labels\/train\/a\.txt: line 2: expected 5 numbers/);
  await refused(t, yolo('0 0.95 0.5 0.2 0.2'), 'yolo', /labels\/train\/a\.txt: line 2: the box reaches outside the image/);
  // One good image stored, then a bad one: the stored one is removed again.
  await refused(t, yolo('', [{ name: 'images/train/b.png', data: Buffer.from('not a png') }]), 'yolo', /images\/train\/b\.png: is not a PNG, JPEG/);
});

test.serial('../ paths, links and a 2 GiB zip bomb are refused; nothing is written outside', async (t) => {
  await refused(t, yolo('', [{ name: '../../escape.png', data: png(4, 4) }]), 'yolo', /\.\.\/\.\.\/escape\.png: has a \.\.\/ path segment/);
  t.false(existsSync(join(fx.cloud.dataDir, 'escape.png')));
  t.false(existsSync(join(fx.cloud.dataDir, '..', 'escape.png')));
  await refused(
    t,
    yolo('', [{ name: 'images/train/link.png', data: Buffer.from('/etc/passwd'), mode: 0o120777 }]),
    'yolo',
    /images\/train\/link\.png: is a symbolic link/,
  );
  await refused(
    t,
    yolo('', [{ name: 'images/train/zeros.png', raw: zeroBomb(2) }]),
    'yolo',
    /images\/train\/zeros\.png: expands to 2147483648 bytes, more than the limit of 268435456 per file \(zip bomb\?\)/,
  );
});

test.serial('header rules: format, dataset, part, permissions', async (t) => {
  const into = await data.createDataset('import-rules', fx.orgA);
  const zip = join(dir, 'ok.zip');
  writeFileSync(zip, rawZip(yolo('')));
  const jsonl = await t.throwsAsync(data.importDataset(into, zip, 'jsonl', fx.machineA1.part_id));
  t.regex(jsonl!.message, /header\.format must be DATASET_FORMAT_COCO or DATASET_FORMAT_YOLO/);
  t.is(codeOf(await t.throwsAsync(data.importDataset('missing', zip, 'yolo', fx.machineA1.part_id))), status.NOT_FOUND);
  t.is(codeOf(await t.throwsAsync(data.importDataset(into, zip, 'yolo', 'no-part'))), status.NOT_FOUND);
  t.is(codeOf(await t.throwsAsync(data.importDataset(into, zip, 'yolo', fx.machineB.part_id))), status.INVALID_ARGUMENT);
  const operator = fx.client(fx.keys.operatorA).dataClient;
  t.is(codeOf(await t.throwsAsync(operator.importDataset(into, zip, 'yolo', fx.machineA1.part_id))), status.PERMISSION_DENIED);
  await t.throwsAsync(data.importDataset(into, join(dir, 'nope.zip'), 'yolo', fx.machineA1.part_id), { message: /no such file or folder/ });
  t.deepEqual((await data.binaryDataByFilter({ datasetId: into })).data, []);
  const ok = await data.importDataset(into, zip, 'yolo', fx.machineA1.part_id);
  t.like(ok, { imageCount: 1, boundingBoxCount: 1 });
});
