// The upload path (DataSyncService: DataCaptureUpload, FileUpload, StreamingDataCaptureUpload) and
// dataset export and import on both TabularStore backends (issue 33), through the real clients against
// the services served over the store in this process (cloud/testing/store-services.ts). On PostgreSQL
// also: two stores on one database, standing for two cloud processes, receive the same upload ids at
// once and commit each once.
import test, { type ExecutionContext } from 'ava';
import { status, type ClientWritableStream, type ServiceError } from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataType, type UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { uploadChunkBytes } from '../client/data-client.js';
import { PgStore } from '../store/pg-store.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { makeTenancy, serveStore, type ServedStore, type Tenancy } from '../testing/store-services.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { insertBinary } from './ingest.js';
import { insertTabularOnce } from './tabular-ingest.js';
import { storedIdFor } from './upload-dedup.js';

const backends = tabularBackends(test);
const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:00:01Z');

function content(bytes: number, seed: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < out.length; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

/** A PNG header of the given size: all that image sizes read. */
function png(width: number, height: number, seed: number): Buffer {
  const b = Buffer.alloc(40);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b.writeUInt32BE(seed, 36);
  return b;
}

async function setUp(t: ExecutionContext, store: StoreWithBlobs): Promise<{ served: ServedStore; ten: Tenancy }> {
  const ten = await makeTenancy(store);
  const served = await serveStore(store);
  t.teardown(() => served.stop());
  return { served, ten };
}

const count = async (store: StoreWithBlobs, sql: string, params: string[]) => Number((await store.query(sql, params))[0].n);

/** The content of the binary datum with this id, read through its row's blob key. */
async function stored(store: StoreWithBlobs, id: string): Promise<Buffer | undefined> {
  const rows = await store.query('SELECT blob_key FROM binary_data WHERE binary_data_id = ?', [id]);
  if (rows.length !== 1) return undefined;
  return store.blobs.get(String(rows[0].blob_key));
}

/** Every blob key under the organization. */
async function blobKeys(store: StoreWithBlobs, org: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const b of store.blobs.list!(`${org}/`)) keys.push(b.key);
  return keys.sort();
}

for (const backend of backends) {
  test(`${backend.name}: tabular, binary, file and streamed uploads commit their rows and content`, async (t) => {
    const store = await backend.open(t);
    const { served, ten } = await setUp(t, store);
    const part = served.partClient(ten.machine).dataClient;
    const pid = ten.machine.part_id;
    const fileId = await part.tabularDataCaptureUpload(
      [{ readings: { a: 1 } }, { readings: { a: 2 } }, { readings: { a: 3 } }],
      pid,
      'rdk:component:sensor',
      's',
      'Readings',
      [
        [t0, t0],
        [t0, t1],
        [t1, t1],
      ],
    );
    t.is(await count(store, 'SELECT count(*) AS n FROM tabular_data WHERE upload_id = ?', [fileId]), 3);
    const image = content(5000, 1);
    const binaryId = await part.binaryDataCaptureUpload(image, pid, 'rdk:component:camera', 'cam', 'GetImage', '.jpg', [t0, t1], ['x']);
    t.deepEqual(await stored(store, binaryId), image);
    const file = content(3 * uploadChunkBytes + 17, 2);
    const fileUploadId = await part.fileUpload(file, pid, { fileName: 'f.bin', fileExtension: '.bin' });
    t.deepEqual(await stored(store, fileUploadId), file);
    const stream = content(2 * uploadChunkBytes + 5, 3);
    const streamId = await part.streamingDataCaptureUpload(stream, pid, '.bin', { componentName: 'cam' });
    t.deepEqual(await stored(store, streamId), stream);
    const rows = await store.query('SELECT binary_data_id, mime_type, file_size_bytes, tags, time_synced FROM binary_data ORDER BY seq');
    t.deepEqual(
      rows.map((r) => [r.binary_data_id, r.file_size_bytes]),
      [
        [binaryId, 5000n],
        [fileUploadId, BigInt(file.length)],
        [streamId, BigInt(stream.length)],
      ],
      'one row each, in the order they arrived (seq)',
    );
    t.like(rows[0], { mime_type: 'image/jpeg', tags: ['x'] });
    t.true(rows[0].time_synced instanceof Date);
    t.is((await blobKeys(store, ten.org)).length, 3, 'one blob per datum, nothing else');
  });

  test(`${backend.name}: a repeated upload id, sent again or at once, is stored once and answered with the same id`, async (t) => {
    const store = await backend.open(t);
    const { served, ten } = await setUp(t, store);
    const part = served.partClient(ten.machine).dataClient;
    const pid = ten.machine.part_id;
    const tabular = () =>
      part.tabularDataCaptureUpload(
        [{ readings: { v: 1 } }, { readings: { v: 2 } }],
        pid,
        'rdk:component:sensor',
        'dup',
        'Readings',
        [
          [t0, t0],
          [t1, t1],
        ],
        [],
        { uploadId: 'tab-1' },
      );
    const first = await tabular();
    t.deepEqual(await Promise.all([tabular(), tabular(), tabular()]), [first, first, first]);
    t.is(first, storedIdFor(pid, 'tab-1'));
    t.is(await count(store, 'SELECT count(*) AS n FROM tabular_data WHERE upload_id = ?', [first]), 2);
    const image = content(4000, 7);
    const ids = await Promise.all([
      part.binaryDataCaptureUpload(image, pid, 'rdk:component:camera', 'cam', 'GetImage', '.jpg', [t0, t1], [], { uploadId: 'img-1' }),
      part.streamingDataCaptureUpload(image, pid, '.jpg', { componentName: 'cam', uploadId: 'img-1' }),
      part.fileUpload(image, pid, { fileExtension: '.jpg', uploadId: 'img-1' }),
      part.binaryDataCaptureUpload(image, pid, 'rdk:component:camera', 'cam', 'GetImage', '.jpg', [t0, t1], [], { uploadId: 'img-1' }),
    ]);
    t.deepEqual(ids, Array(4).fill(storedIdFor(pid, 'img-1')));
    t.is(await count(store, 'SELECT count(*) AS n FROM binary_data WHERE binary_data_id = ?', [ids[0]]), 1);
    t.deepEqual(await stored(store, ids[0]), image);
    t.is((await blobKeys(store, ten.org)).length, 1, 'the attempts that found the id taken left no blob behind');
  });

  test(`${backend.name}: a stream cut off mid-upload commits nothing; its retry with the same upload id commits the whole file once`, async (t) => {
    const store = await backend.open(t);
    const { served, ten } = await setUp(t, store);
    const client = served.partClient(ten.machine);
    const data = content(4 * uploadChunkBytes, 9);
    for (const kind of ['FileUpload', 'StreamingDataCaptureUpload'] as const) {
      const uploadId = `cut-${kind}`;
      const upload: UploadMetadata = {
        partId: ten.machine.part_id,
        componentType: 'camera',
        componentName: 'cam',
        methodName: 'ReadImage',
        type: DataType.DATA_TYPE_FILE,
        fileName: 'frame.bin',
        methodParameters: undefined,
        fileExtension: '.bin',
        tags: [],
        datasetIds: [],
        mimeType: '',
        uploadId,
      };
      const md = await client.connection.metadata();
      const sync = client.dataClient.dataSync;
      let call!: ClientWritableStream<unknown>;
      const done = new Promise<ServiceError | undefined>((resolve) => {
        const cb = (err: ServiceError | null) => resolve(err ?? undefined);
        if (kind === 'FileUpload') {
          call = sync.fileUpload(md, cb) as ClientWritableStream<unknown>;
          call.write({ metadata: upload });
        } else {
          call = sync.streamingDataCaptureUpload(md, cb) as ClientWritableStream<unknown>;
          call.write({ metadata: { uploadMetadata: { ...upload, type: DataType.DATA_TYPE_BINARY_SENSOR }, sensorMetadata: undefined } });
        }
      });
      const chunk = data.subarray(0, uploadChunkBytes);
      await new Promise<void>((resolve) => call.write(kind === 'FileUpload' ? { fileContents: { data: chunk } } : { data: chunk }, () => resolve()));
      call.cancel();
      t.is((await done)?.code, status.CANCELLED);
      // Had the cut-off upload committed its one chunk, the retry would be taken for a repeat and the
      // stored content would be that chunk: the whole file stored shows it did not.
      const retried =
        kind === 'FileUpload'
          ? await client.dataClient.fileUpload(data, ten.machine.part_id, { fileExtension: '.bin', uploadId })
          : await client.dataClient.streamingDataCaptureUpload(data, ten.machine.part_id, '.bin', { uploadId });
      t.is(retried, storedIdFor(ten.machine.part_id, uploadId));
      t.deepEqual(await stored(store, retried), data, `${kind}: the whole file, once`);
    }
    t.is(await count(store, 'SELECT count(*) AS n FROM binary_data WHERE organization_id = ?', [ten.org]), 2);
  });

  test(`${backend.name}: a dataset version exported as COCO and imported into another dataset keeps its images and boxes`, async (t) => {
    const store = await backend.open(t);
    const { served, ten } = await setUp(t, store);
    const owner = served.client(ten.owner).dataClient;
    const part = served.partClient(ten.machine).dataClient;
    const from = await owner.createDataset('from', ten.org);
    const images = [png(64, 32, 1), png(16, 16, 2)];
    const ids = [];
    for (const image of images) {
      ids.push(
        await part.binaryDataCaptureUpload(image, ten.machine.part_id, 'rdk:component:camera', 'cam', 'GetImage', '.png', [t0, t1], [], { datasetIds: [from] }),
      );
    }
    await store.execute('INSERT INTO bounding_boxes VALUES (?, ?, ?, ?, ?, ?, ?, NULL)', ['box-1', ids[0], 'car', 0.25, 0.5, 0.75, 1]);
    const version = await owner.createDatasetVersion(from, { train: 1, valid: 0, test: 0, seed: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'uploads-backends-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const zip = join(dir, 'coco.zip');
    await owner.exportDataset(from, zip, { version: version.version, format: 'coco' });
    await owner.exportDataset(from, join(dir, 'live'), { format: 'jsonl' });
    const into = await owner.createDataset('into', ten.org);
    const res = await owner.importDataset(into, zip, 'coco', ten.machine.part_id);
    t.like(res, { imageCount: 2, boundingBoxCount: 1 });
    const imported = await store.query(
      `SELECT binary_data_id, blob_key, dataset_ids, tags, seq FROM binary_data WHERE organization_id = ? AND component_name = 'dataset-import' ORDER BY seq`,
      [ten.org],
    );
    t.is(imported.length, 2);
    t.deepEqual(
      imported.map((r) => r.dataset_ids),
      [[into], [into]],
    );
    t.deepEqual(
      imported.map((r) => r.tags),
      [[`PLATFORM_DATASET_${into}`], [`PLATFORM_DATASET_${into}`]],
    );
    t.is(new Set(imported.map((r) => r.seq)).size, 2);
    const contents = await Promise.all(imported.map((r) => store.blobs.get(String(r.blob_key))));
    t.deepEqual(
      contents.map((c) => c!.toString('hex')).sort(),
      images.map((c) => c.toString('hex')).sort(),
      'the imported images are the exported ones, byte for byte',
    );
    const boxes = await store.query(
      'SELECT label, x_min_normalized, y_min_normalized, x_max_normalized, y_max_normalized FROM bounding_boxes WHERE binary_data_id IN (?, ?)',
      imported.map((r) => String(r.binary_data_id)),
    );
    t.deepEqual(boxes, [{ label: 'car', x_min_normalized: 0.25, y_min_normalized: 0.5, x_max_normalized: 0.75, y_max_normalized: 1 }]);
  });
}

const postgres = backends[1];

test('postgres: two stores on one database (two cloud processes) receiving the same upload ids at once commit each once', async (t) => {
  const a = await postgres.open(t);
  // The URL of a's own database (lastUrl may already name another test's, opened meanwhile).
  const database = String((await a.query('SELECT current_database() AS d'))[0].d);
  const b = await PgStore.open(postgres.lastUrl!.replace(/\/[^/]+$/, `/${database}`), { poolSize: 4, blobs: a.blobs });
  t.teardown(() => b.close());
  const ten = await makeTenancy(a);
  const [servedA, servedB] = await Promise.all([serveStore(a), serveStore(b)]);
  t.teardown(() => Promise.all([servedA.stop(), servedB.stop()]));
  const viaA = servedA.partClient(ten.machine).dataClient;
  const viaB = servedB.partClient(ten.machine).dataClient;
  const pid = ten.machine.part_id;
  const rounds = 6;
  for (let i = 0; i < rounds; i++) {
    const points = Array.from({ length: 50 }, (_, j) => ({ readings: { i, j } }));
    const times = points.map((): [Date, Date] => [t0, t1]);
    const tab = (c: typeof viaA) => c.tabularDataCaptureUpload(points, pid, 'rdk:component:sensor', 'race', 'Readings', times, [], { uploadId: `tab-${i}` });
    const image = content(3000, i);
    const bin = (c: typeof viaA) =>
      c.binaryDataCaptureUpload(image, pid, 'rdk:component:camera', 'cam', 'GetImage', '.jpg', [t0, t1], [], { uploadId: `img-${i}` });
    const [ta, tb, ba, bb] = await Promise.all([tab(viaA), tab(viaB), bin(viaA), bin(viaB)]);
    t.is(ta, tb);
    t.is(ba, bb);
    t.is(await count(a, 'SELECT count(*) AS n FROM tabular_data WHERE upload_id = ?', [ta]), 50, `round ${i}: the points once`);
    t.is(await count(a, 'SELECT count(*) AS n FROM binary_data WHERE binary_data_id = ?', [ba]), 1);
    t.deepEqual(await stored(a, ba), image);
  }
  t.is((await blobKeys(a, ten.org)).length, rounds, 'one blob per binary upload: the losing attempts removed theirs');
});

test('postgres: the database settles a race of one upload id between two stores, without the check before writing', async (t) => {
  const a = await postgres.open(t);
  const database = String((await a.query('SELECT current_database() AS d'))[0].d);
  const b = await PgStore.open(postgres.lastUrl!.replace(/\/[^/]+$/, `/${database}`), { poolSize: 4, blobs: a.blobs });
  t.teardown(() => b.close());
  const part = { kind: 'part' as const, partId: 'p', partName: 'p-main', machineId: 'm', robotName: 'm', locationId: 'l', organizationId: 'o' };
  const capture = { part, componentType: 'rdk:component:sensor', componentName: 's', methodName: 'Readings', tags: [] };
  const points = Array.from({ length: 200 }, (_, i) => ({ timeRequested: t0, timeReceived: t1, data: { readings: { i } } }));
  for (let round = 0; round < 5; round++) {
    const id = `race-${round}`;
    const outcomes = await Promise.all([a, b, a, b].map((s) => insertTabularOnce(s, capture, points, id)));
    t.is(outcomes.filter(Boolean).length, 1, `round ${round}: one insert claims the id`);
    t.is(await count(a, 'SELECT count(*) AS n FROM tabular_data WHERE upload_id = ?', [id]), 200);
    const image = content(1000, round);
    const binary = await Promise.all(
      [a, b, a, b].map((s) =>
        insertBinary(s, {
          ...capture,
          componentType: 'rdk:component:camera',
          fileName: '',
          fileExtension: '.jpg',
          mimeType: 'image/jpeg',
          datasetIds: [],
          timeRequested: t0,
          timeReceived: t1,
          content: image,
          id: `img-${round}`,
        }),
      ),
    );
    t.is(binary.filter((r) => r.stored).length, 1, `round ${round}: one binary insert commits`);
    t.deepEqual(await stored(a, `img-${round}`), image);
  }
  t.is((await blobKeys(a, 'o')).length, 5, 'the attempts that lost removed their blobs');
});
