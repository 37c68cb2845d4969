// Issue 33's two-cloud scenario as a fixture, so that it runs against more than one S3 implementation
// without copying the tests: twoClouds() registers hooks that start one PostgreSQL, one S3 service (the
// fast fake s3rver, or Ceph's radosgw, a real S3) and two platform-cloud processes, A and B, on them;
// the test functions below register the scenario's S3-bound tests on that pair. Used by
// cloud/server/scale-out-clouds.test.ts (s3rver, plus the tests that do not touch S3) and
// cloud/server/scale-out-clouds-radosgw.test.ts (radosgw: what S3 behaviour decides).
import type { ClientWritableStream } from '@grpc/grpc-js';
import type { TestFn } from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataType, type UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { createCloudClient, type CloudClient } from '../client/cloud-client.js';
import { uploadChunkBytes } from '../client/data-types.js';
import { uploadTempPattern } from '../store/blob-store.js';
import type { PgStore } from '../store/pg-store.js';
import { startScaleOutBackends, spawnScaleOutCloud, type ScaleOutBackends, type ScaleOutOptions } from './scale-out.js';
import { removeDataDir, type SpawnedCloud } from './spawn-cloud.js';

/** What the hooks set up; its fields are there once the file's before hook has run. */
export interface TwoClouds {
  backends: ScaleOutBackends;
  /** The same database and bucket, opened in the test's own process. */
  tables: PgStore;
  a: SpawnedCloud;
  b: SpawnedCloud;
  org: string;
  partId: string;
  owner: { id: string; key: string };
  /** Whether the S3 lists unfinished multipart uploads (radosgw does; s3rver answers 501). */
  listsUnfinishedUploads: boolean;
  /** A client of cloud with an API key (the owner's by default), closed after the file. */
  clientOf(cloud: SpawnedCloud, key?: { id: string; key: string }): CloudClient;
}

export function twoClouds(test: TestFn, options: ScaleOutOptions = {}): TwoClouds {
  const clients: CloudClient[] = [];
  const world = {
    clientOf(cloud: SpawnedCloud, key = world.owner) {
      const client = createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
      clients.push(client);
      return client;
    },
    listsUnfinishedUploads: options.s3 === 'radosgw',
  } as TwoClouds;

  test.before(async () => {
    world.backends = await startScaleOutBackends(options);
    world.tables = await world.backends.openTables();
    // The elected process sweeps every second, objects unnamed for 5 s (far more than an upload takes
    // from its content to its row, even on a loaded machine), so the test waits seconds, not minutes.
    const env = { PLATFORM_BLOB_ORPHAN_AGE_S: '5', PLATFORM_BLOB_SWEEP_INTERVAL_S: '1' };
    // Both at once, as an operator's units start them: on a fresh database that once deadlocked in
    // pg-boss's create_queue (PostgreSQL 40P01) and one cloud exited; cloud/store/pg-boss-queue.ts now
    // retries the victim. Each cloud that started is in `world` before a failure of the other is
    // thrown, so that after.always stops it.
    const [a, b] = await Promise.allSettled([spawnScaleOutCloud(world.backends, [], env), spawnScaleOutCloud(world.backends, [], env)]);
    if (a.status === 'fulfilled') world.a = a.value;
    if (b.status === 'fulfilled') world.b = b.value;
    for (const started of [a, b]) if (started.status === 'rejected') throw started.reason;
    world.org = (await createOrganization(world.tables, { name: 'fleet' })).id;
    world.partId = (await createMachine(world.tables, { org: world.org, name: 'rover' })).part_id;
    world.owner = await createKey(world.tables, { org: world.org, role: 'owner' });
  });

  test.after.always(async () => {
    for (const client of clients) client.close();
    for (const cloud of [world.a, world.b]) {
      if (!cloud) continue;
      await cloud.stop().catch(() => undefined);
      removeDataDir(cloud.dataDir);
    }
    await world.backends?.stop();
  });
  return world;
}

/** Readings of one component, one per millisecond, each naming its index. */
export const readingsOf = (n: number, label: string) => ({
  data: Array.from({ length: n }, (_, i) => ({ readings: { label, i } })),
  times: Array.from({ length: n }, (_, i): [Date, Date] => [new Date(Date.UTC(2026, 10, 1, 0, 0, 0, i)), new Date(Date.UTC(2026, 10, 1, 0, 0, 0, i + 1))]),
});

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Registers: an upload through A (readings, a capture, a multi-part streamed file) reads back through B. */
export function testUploadThroughA(test: TestFn, world: TwoClouds, titleSuffix = ''): void {
  test.serial(`an upload through A reads back through B: readings, a capture and a streamed file larger than one S3 part${titleSuffix}`, async (t) => {
    const { a, b, partId } = world;
    const viaA = world.clientOf(a).dataClient;
    const viaB = world.clientOf(b).dataClient;
    const { data, times } = readingsOf(300, 'through-a');
    await viaA.tabularDataCaptureUpload(data, partId, 'rdk:component:sensor', 'thermo-a', 'Readings', times, ['pair']);
    const image = randomBytes(3000);
    const big = randomBytes(9 * 1024 * 1024 + 17);
    const imageId = await viaA.binaryDataCaptureUpload(image, partId, 'rdk:component:camera', 'cam', 'GetImages', '.png', [new Date(), new Date()]);
    const fileId = await viaA.fileUpload(big, partId, { fileName: 'scan.bin' });

    const rows = await viaB.tabularDataByFilter({ componentName: 'thermo-a' }, { limit: 1000 });
    t.is(rows.data.length, 300, 'every reading A took is served by B');
    t.deepEqual(
      rows.data.map((r) => (r.data as { readings: { i: number } }).readings.i).sort((x, y) => x - y),
      data.map((_, i) => i),
    );
    const [gotImage, gotFile] = await viaB.binaryDataByIds([imageId, fileId], { includeBinary: true });
    t.true(Buffer.from(gotImage.binary).equals(image), 'the capture A stored reads back whole through B');
    t.true(Buffer.from(gotFile.binary).equals(big), 'the streamed (multipart) file A stored reads back whole through B');
  });
}

/** The temp keys (streamed uploads' unfinished multipart uploads or temp objects) the store lists now. */
async function tempKeys(world: TwoClouds): Promise<string[]> {
  const keys: string[] = [];
  for await (const blob of world.tables.blobs.list!()) if (uploadTempPattern.test(blob.key)) keys.push(blob.key);
  return keys;
}

/**
 * A FileUpload to A that has sent more than one S3 part and is never ended, so that A has begun a
 * multipart upload that it will not finish: resolves once the store lists it (the S3 service has the
 * upload). A trickle of bytes keeps the stream from the idle cut-off until stop() (or A's death).
 */
async function holdMultipartUpload(world: TwoClouds): Promise<{ stop(): void }> {
  const client = world.clientOf(world.a);
  const md = await client.connection.metadata();
  let ended: Error | null | undefined; // A is killed under it: then the upload is not acknowledged
  const call = client.dataClient.dataSync.fileUpload(md, (err) => (ended = err)) as ClientWritableStream<unknown>;
  const metadata: UploadMetadata = {
    partId: world.partId,
    componentType: '',
    componentName: '',
    methodName: '',
    type: DataType.DATA_TYPE_FILE,
    fileName: 'held.bin',
    fileExtension: '.bin',
    tags: ['held'],
    datasetIds: [],
    mimeType: '',
    uploadId: '',
  };
  call.write({ metadata });
  const chunk = Buffer.alloc(uploadChunkBytes, 7);
  for (let sent = 0; sent <= 8 * 1024 * 1024; sent += chunk.byteLength) call.write({ fileContents: { data: chunk } });
  const trickle = setInterval(() => call.write({ fileContents: { data: chunk.subarray(0, 1) } }), 1000).unref();
  for (let attempt = 0; (await tempKeys(world)).length === 0; attempt++) {
    if (attempt === 300 || ended !== undefined) {
      clearInterval(trickle);
      call.cancel();
      throw new Error(`A began no multipart upload for a stream past one part (the call ended: ${String(ended)})`);
    }
    await sleep(100);
  }
  return { stop: () => clearInterval(trickle) };
}

/** What the writers sent and got acknowledged. */
interface Acked {
  tabular: { component: string; points: number }[];
  files: { id: string; sha: string }[];
}

/**
 * Registers the kill -9 of A during uploads. It leaves A dead: register it after every other serial
 * test of the file that uses A.
 */
export function testKillADuringUploads(test: TestFn, world: TwoClouds, titleSuffix = ''): void {
  test.serial(
    `kill -9 of A during uploads: everything A acknowledged is whole through B, nothing is half there; the sweep then removes only unnamed objects${titleSuffix}`,
    async (t) => {
      const { a, b, partId, org, tables } = world;
      // On an S3 that lists unfinished multipart uploads, one stream is certainly cut mid-multipart by
      // the kill (the writers' own may or may not be), so the sweep must abort such an upload.
      const held = world.listsUnfinishedUploads ? await holdMultipartUpload(world) : undefined;
      const viaA = world.clientOf(a).dataClient;
      const acked: Acked = { tabular: [], files: [] };
      const points = 400;
      let stop = false;
      let sent = 0;
      // Four writers on A, each in turn: readings of one component per upload, a file (FileUpload, some past
      // one 8 MiB S3 part: a multipart upload through a temp object) and a streamed capture
      // (StreamingDataCaptureUpload), until A dies under them.
      let killed = false;
      const failures: string[] = [];
      const writers = Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          try {
            if (i % 3 === 0) {
              const component = `kill-${w}-${i}`;
              const { data, times } = readingsOf(points, component);
              sent++;
              await viaA.tabularDataCaptureUpload(data, partId, 'rdk:component:sensor', component, 'Readings', times, ['kill']);
              acked.tabular.push({ component, points });
            } else if (i % 3 === 1) {
              const bytes = randomBytes(w % 2 === 0 ? 9 * 1024 * 1024 : 200_000 + i);
              sent++;
              const id = await viaA.fileUpload(bytes, partId, { fileName: `f-${w}-${i}.bin`, tags: ['kill'] });
              acked.files.push({ id, sha: sha(bytes) });
            } else {
              const bytes = randomBytes(w % 2 === 0 ? 6 * 1024 * 1024 : 300_000 + i);
              sent++;
              const id = await viaA.streamingDataCaptureUpload(bytes, partId, '.bin', {
                componentType: 'rdk:component:camera',
                componentName: `cam-${w}`,
                tags: ['kill'],
              });
              acked.files.push({ id, sha: sha(bytes) });
            }
          } catch (err) {
            // A is gone: the call in flight is not acknowledged. Before the kill, a failure is a bug.
            if (!killed) failures.push(String(err));
            return;
          }
        }
      });
      // Kill once some uploads of each kind were acknowledged, with the writers mid-upload.
      let writersEnded = false;
      void Promise.all(writers).then(() => (writersEnded = true));
      while ((acked.tabular.length < 4 || acked.files.length < 4) && !writersEnded) await sleep(20);
      t.false(writersEnded, 'the writers were still uploading when A was killed (none failed before)');
      killed = true;
      await a.kill9();
      held?.stop();
      stop = true;
      await Promise.all(writers);
      t.deepEqual(failures, [], 'no upload failed before the kill');
      t.log(`A acknowledged ${acked.tabular.length} reading uploads and ${acked.files.length} files of ${sent} started`);

      const viaB = world.clientOf(b).dataClient;
      for (const upload of acked.tabular) {
        const rows = await viaB.tabularDataByFilter({ componentName: upload.component }, { limit: 1000 });
        t.is(rows.data.length, upload.points, `acknowledged upload ${upload.component} is whole on B`);
      }
      const files = await viaB.binaryDataByIds(
        acked.files.map((f) => f.id),
        { includeBinary: true },
      );
      t.deepEqual(
        files.map((f) => sha(f.binary)),
        acked.files.map((f) => f.sha),
        'every file A acknowledged reads back byte for byte through B',
      );
      // No half rows: every upload in the database has all of its points, acknowledged or not.
      const groups = await tables.query("SELECT component_name, count(*) AS n FROM tabular_data WHERE component_name LIKE 'kill-%' GROUP BY component_name");
      t.deepEqual(
        groups.filter((g) => Number(g.n) !== points),
        [],
        'an upload is in the database whole or not at all',
      );
      // Every binary row names content that is there.
      const named = (await tables.query('SELECT blob_key FROM binary_data')).map((r) => String(r.blob_key));
      const before = new Set<string>();
      for await (const blob of tables.blobs.list!()) before.add(blob.key);
      t.deepEqual(
        named.filter((k) => !before.has(k)),
        [],
        'no row names missing content',
      );

      if (world.listsUnfinishedUploads)
        t.true(
          [...before].some((k) => uploadTempPattern.test(k)),
          "the held stream's unfinished multipart upload is listed",
        );

      // The sweep: an object no row names (as content stored just before a crash leaves), plus whatever A's
      // kill left (on a real S3 also the unfinished multipart uploads of the streams cut short, listed by
      // their temp key), is removed by the leader (B now); every named object stays.
      await tables.blobs.put(`${org}/orphan-after-kill`, Buffer.from('no row names me'));
      const unnamed = [...before, `${org}/orphan-after-kill`].filter((k) => !named.includes(k));
      t.log(`unnamed before the sweep: ${unnamed.length} (${unnamed.filter((k) => k !== `${org}/orphan-after-kill`).length} left by the kill)`);
      let left: string[] = [];
      for (let attempt = 0; attempt < 300; attempt++) {
        left = [];
        for await (const blob of tables.blobs.list!()) left.push(blob.key);
        if (!left.some((k) => !named.includes(k))) break;
        await sleep(100);
      }
      t.deepEqual(
        left.filter((k) => !named.includes(k)),
        [],
        'the sweep removed every object no row names',
      );
      t.deepEqual(left.sort(), [...named].sort(), 'and kept every named one');
    },
  );
}
