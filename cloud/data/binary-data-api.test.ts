// Binary data, files, tags and bounding boxes, with their SPEC.md errors, through the real client against
// a spawned platform-cloud (tabular data is in data-api.test.ts).
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileNotFoundError } from '../client/index.js';
import type { DataClient } from '../client/data-client.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { CAMERA as camera, SENSOR as sensor, grpcCode, sensorReadings as readings, timePairs as pairs } from '../testing/data-samples.js';

let fx: CloudFixture;
let data: DataClient;
let part: string;
const tmp = mkdtempSync(join(tmpdir(), 'binary-data-api-test-'));

test.before(async () => {
  fx = await startFixture();
  data = fx.client(fx.keys.ownerA).dataClient;
  part = fx.machineA1.part_id;
});

test.after.always(async () => {
  await fx?.close();
});

test.serial('binary uploads take their MIME type from the extension and come back with or without content', async (t) => {
  const times: [Date, Date] = [new Date(Date.now() - 1000), new Date()];
  const jpg = await data.binaryDataCaptureUpload(Buffer.from('jpeg bytes'), part, camera, 'cam', 'GetImages', '.jpg', times, ['img']);
  const png = await data.binaryDataCaptureUpload(Buffer.from('png bytes'), part, camera, 'cam', 'GetImages', '.png', times);
  const pcd = await data.binaryDataCaptureUpload(Buffer.from('pcd bytes'), part, camera, 'cam', 'NextPointCloud', '.pcd', times);
  const other = await data.binaryDataCaptureUpload(Buffer.from('other'), part, camera, 'cam', 'Do', '.bin', times);
  const records = await data.binaryDataByIds([jpg, png, pcd, other]);
  t.deepEqual(
    records.map((r) => r.metadata.captureMetadata!.mimeType),
    ['image/jpeg', 'image/png', 'pointcloud/pcd', 'application/octet-stream'],
  );
  t.is(Buffer.from(records[0].binary).toString(), 'jpeg bytes');
  t.like(records[0].metadata, { binaryDataId: jpg, fileExt: '.jpg', fileSizeBytes: 10 });
  t.deepEqual(records[0].metadata.captureMetadata!.tags, ['img']);
  t.is(records[0].metadata.timeRequested!.getTime(), times[0].getTime());
  const bare = await data.binaryDataByIds([jpg], { includeBinary: false });
  t.is(bare[0].binary.length, 0);
  const byFilter = await data.binaryDataByFilter({ mimeType: ['image/jpeg', 'image/png'] });
  t.deepEqual(byFilter.data.map((r) => r.metadata.binaryDataId).sort(), [jpg, png].sort());
  t.is(Buffer.from(byFilter.data[0].binary).length > 0, true);
  const noContent = await data.binaryDataByFilter({ mimeType: ['pointcloud/pcd'] }, { includeBinary: false });
  t.is(noContent.data[0].binary.length, 0);
  t.is(noContent.totalSizeBytes, 9);
  t.is((await data.binaryDataByFilter({ componentName: 'cam' }, { countOnly: true })).count, 4);
  // Deprecated BinaryID objects still work.
  const legacy = await data.binaryDataByIds([{ fileId: jpg, organizationId: fx.orgA, locationId: fx.locA1 }]);
  t.is(legacy[0].metadata.binaryDataId, jpg);
});

test.serial('binary ids lists must not be empty, and unknown ids are NOT_FOUND', async (t) => {
  t.is(await grpcCode(t, data.binaryDataByIds([])), status.INVALID_ARGUMENT);
  t.is(await grpcCode(t, data.deleteBinaryDataByIds([])), status.INVALID_ARGUMENT);
  t.is(await grpcCode(t, data.addTagsToBinaryDataByIds(['a'], [])), status.INVALID_ARGUMENT);
  t.is(await grpcCode(t, data.binaryDataByIds(['missing-id'])), status.NOT_FOUND);
});

test.serial('file uploads stream in chunks; from a path they keep the name; a missing path is a client error', async (t) => {
  const big = Buffer.alloc(200 * 1024, 7);
  const id = await data.fileUpload(big, part, { fileName: 'log.txt', tags: ['f'] });
  const [record] = await data.binaryDataByIds([id]);
  t.true(Buffer.from(record.binary).equals(big));
  t.like(record.metadata, { fileName: 'log.txt', fileExt: '.txt' });
  t.is(record.metadata.captureMetadata!.mimeType, 'text/plain');
  const path = join(tmp, 'photo.png');
  writeFileSync(path, 'png!');
  const fromPath = await data.fileUploadFromPath(path, part);
  const [photo] = await data.binaryDataByIds([fromPath]);
  t.like(photo.metadata, { fileName: 'photo.png', fileExt: '.png' });
  t.is(photo.metadata.captureMetadata!.mimeType, 'image/png');
  await t.throwsAsync(data.fileUploadFromPath(join(tmp, 'nope.jpg'), part), { instanceOf: FileNotFoundError });
});

test.serial('streaming uploads need a file extension and store the whole stream', async (t) => {
  const content = Buffer.alloc(150 * 1024, 3);
  const times: [Date, Date] = [new Date(Date.now() - 5000), new Date(Date.now() - 4000)];
  const id = await data.streamingDataCaptureUpload(content, part, '.pcd', { componentName: 'lidar', dataRequestTimes: times, tags: ['s'] });
  const [record] = await data.binaryDataByIds([id]);
  t.true(Buffer.from(record.binary).equals(content));
  t.is(record.metadata.captureMetadata!.mimeType, 'pointcloud/pcd');
  t.is(record.metadata.timeRequested!.getTime(), times[0].getTime());
  t.is(await grpcCode(t, data.streamingDataCaptureUpload(content, part, '')), status.INVALID_ARGUMENT);
});

test.serial('tags are added and removed by ids and by filter, and listed by filter', async (t) => {
  const times: [Date, Date] = [new Date(), new Date()];
  const a = await data.binaryDataCaptureUpload(Buffer.from('a'), part, camera, 'tagcam', 'GetImages', '.jpg', times);
  const b = await data.binaryDataCaptureUpload(Buffer.from('b'), part, camera, 'tagcam', 'GetImages', '.jpg', times, ['keep']);
  await data.addTagsToBinaryDataByIds(['x', 'y'], [a]);
  t.deepEqual((await data.binaryDataByIds([a]))[0].metadata.captureMetadata!.tags, ['x', 'y']);
  await data.addTagsToBinaryDataByFilter(['z'], { componentName: 'tagcam' });
  t.deepEqual((await data.binaryDataByIds([b]))[0].metadata.captureMetadata!.tags, ['keep', 'z']);
  t.deepEqual(await data.tagsByFilter({ componentName: 'tagcam' }), ['keep', 'x', 'y', 'z']);
  t.is(await data.removeTagsFromBinaryDataByIds(['x'], [a]), 1);
  t.deepEqual((await data.binaryDataByIds([a]))[0].metadata.captureMetadata!.tags, ['y', 'z']);
  t.is(await data.removeTagsFromBinaryDataByFilter(['z'], { componentName: 'tagcam' }), 2);
  t.deepEqual(await data.tagsByFilter({ componentName: 'tagcam' }), ['keep', 'y']);
  t.is(await grpcCode(t, data.addTagsToBinaryDataByIds([], [a])), status.INVALID_ARGUMENT);
  t.is(await grpcCode(t, data.removeTagsFromBinaryDataByIds([], [a])), status.INVALID_ARGUMENT);
});

test.serial('a file upload goes to disk as its chunks arrive, not at the end', async (t) => {
  const { DataType } = await import('../../gen/platform/app/datasync/v1/data_sync.js');
  const md = await (data as unknown as { connection: { metadata(): Promise<import('@grpc/grpc-js').Metadata> } }).connection.metadata();
  const blobRoot = join(fx.cloud.dataDir, 'blobs');
  const chunk = Buffer.alloc(64 * 1024, 9);
  let answer: (v: string) => void = () => undefined;
  let fail: (e: unknown) => void = () => undefined;
  const done = new Promise<string>((resolve, reject) => ((answer = resolve), (fail = reject)));
  const stream = data.dataSync.fileUpload(md, (err, res) => (err ? fail(err) : answer(res!.binaryDataId)));
  stream.write({
    metadata: {
      partId: part,
      componentType: '',
      componentName: 'streamed',
      methodName: '',
      type: DataType.DATA_TYPE_FILE,
      fileName: 'big.bin',
      methodParameters: undefined,
      fileExtension: '.bin',
      tags: [],
      datasetIds: [],
      mimeType: '',
      uploadId: '',
    },
  });
  for (let i = 0; i < 16; i++) stream.write({ fileContents: { data: chunk } });
  // The stream is still open: the content must already be in a temp file of the blob store.
  const written = async () => {
    try {
      return readdirSync(blobRoot)
        .filter((f) => f.endsWith('.tmp'))
        .map((f) => statSync(join(blobRoot, f)).size);
    } catch {
      return [];
    }
  };
  let sizes: number[] = [];
  for (let i = 0; i < 100 && !sizes.some((s) => s >= 16 * chunk.length); i++) {
    await new Promise((r) => setTimeout(r, 50));
    sizes = await written();
  }
  t.true(
    sizes.some((s) => s >= 16 * chunk.length),
    `temp files while the upload is open: ${JSON.stringify(sizes)}`,
  );
  stream.write({ fileContents: { data: Buffer.from('end') } });
  stream.end();
  const id = await done;
  const [record] = await data.binaryDataByIds([id]);
  t.is(record.binary.length, 16 * chunk.length + 3);
  t.is(record.metadata.fileSizeBytes, 16 * chunk.length + 3);
  t.deepEqual(await written(), []);
});

test.serial('tags by filter lists the tags of tabular data too, unless the filter describes binary data only', async (t) => {
  await data.tabularDataCaptureUpload(readings(2), part, sensor, 'tagged-thermo', 'Readings', pairs(2), ['tab-tag', 'both']);
  await data.binaryDataCaptureUpload(Buffer.from('t'), part, camera, 'tagged-cam', 'GetImages', '.jpg', [new Date(), new Date()], ['bin-tag', 'both']);
  t.deepEqual(await data.tagsByFilter({ componentName: 'tagged-thermo' }), ['both', 'tab-tag']);
  const all = await data.tagsByFilter();
  t.true(['tab-tag', 'bin-tag', 'both'].every((tag) => all.includes(tag)));
  t.is(all.filter((tag) => tag === 'both').length, 1);
  const images = await data.tagsByFilter({ mimeType: ['image/jpeg'] });
  t.true(images.includes('bin-tag'));
  t.false(images.includes('tab-tag'));
});

test.serial('bounding boxes are validated, returned as annotations, listed by label and removed', async (t) => {
  const times: [Date, Date] = [new Date(), new Date()];
  const img = await data.binaryDataCaptureUpload(Buffer.from('i'), part, camera, 'boxcam', 'GetImages', '.jpg', times);
  const bbox = await data.addBoundingBoxToImageById(img, 'cat', 0.1, 0.2, 0.5, 0.6);
  await data.addBoundingBoxToImageById(img, 'dog', 0, 0, 1, 1);
  const [record] = await data.binaryDataByIds([img]);
  t.deepEqual(
    record.metadata.annotations!.bboxes.find((b) => b.id === bbox),
    { id: bbox, label: 'cat', xMinNormalized: 0.1, yMinNormalized: 0.2, xMaxNormalized: 0.5, yMaxNormalized: 0.6, confidence: undefined },
  );
  t.deepEqual(await data.boundingBoxLabelsByFilter({ componentName: 'boxcam' }), ['cat', 'dog']);
  t.deepEqual(
    (await data.binaryDataByFilter({ bboxLabels: ['cat'] })).data.map((d) => d.metadata.binaryDataId),
    [img],
  );
  for (const coords of [
    [-0.1, 0, 0.5, 0.5],
    [0, 0, 1.1, 0.5],
    [0, 1.5, 1, 1],
    [0, 0, 0.5, 2],
  ]) {
    const err = await t.throwsAsync(data.addBoundingBoxToImageById(img, 'cat', coords[0], coords[1], coords[2], coords[3]));
    t.is(codeOf(err), status.INVALID_ARGUMENT);
    t.regex(err!.message, /\[0, 1\]/);
  }
  t.is(await grpcCode(t, data.addBoundingBoxToImageById(img, 'cat', 0.6, 0, 0.5, 1)), status.INVALID_ARGUMENT);
  const file = await data.fileUpload(Buffer.from('t'), part, { fileName: 'a.txt' });
  t.is(await grpcCode(t, data.addBoundingBoxToImageById(file, 'cat', 0, 0, 1, 1)), status.INVALID_ARGUMENT);
  await data.removeBoundingBoxFromImageById(img, bbox);
  t.deepEqual(await data.boundingBoxLabelsByFilter({ componentName: 'boxcam' }), ['dog']);
  t.is(await grpcCode(t, data.removeBoundingBoxFromImageById(img, bbox)), status.NOT_FOUND);
});

test.serial('binary deletes: by ids, and by a filter that must name an organization', async (t) => {
  const times: [Date, Date] = [new Date(), new Date()];
  const a = await data.binaryDataCaptureUpload(Buffer.from('a'), part, camera, 'delcam', 'GetImages', '.jpg', times);
  const b = await data.binaryDataCaptureUpload(Buffer.from('b'), part, camera, 'delcam', 'GetImages', '.jpg', times);
  const c = await data.binaryDataCaptureUpload(Buffer.from('c'), part, camera, 'delcam2', 'GetImages', '.jpg', times);
  t.is(await data.deleteBinaryDataByIds([a, 'unknown']), 1);
  t.is(await grpcCode(t, data.binaryDataByIds([a])), status.NOT_FOUND);
  t.is(await grpcCode(t, data.deleteBinaryDataByFilter({ componentName: 'delcam' })), status.INVALID_ARGUMENT);
  t.is(await data.deleteBinaryDataByFilter({ componentName: 'delcam', organizationIds: [fx.orgA] }), 1);
  t.is(await grpcCode(t, data.binaryDataByIds([b])), status.NOT_FOUND);
  t.is((await data.binaryDataByIds([c])).length, 1);
});
