// Sync against the real platform-cloud: files are deleted only after the cloud acknowledged them, a file
// re-sent after a crash between the acknowledgement and the delete is not stored twice, and a refused or
// failed upload keeps the file, reports the error and backs off exponentially.
import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startFixture, type CloudFixture } from '../../cloud/testing/tenancy-fixture.js';
import { SensorData } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { CaptureFileWriter, type CaptureFileHeader } from '../../core/datamanager/capture-file.js';
import { connectPartCloud } from '../../core/datamanager/part-cloud.js';
import { INITIAL_BACKOFF_MS, Syncer } from '../../core/datamanager/sync.js';

let fx: CloudFixture;
test.before(async () => {
  fx = await startFixture();
});
test.after.always(async () => {
  await fx?.close();
});

const quiet = { info: () => undefined, warn: () => undefined };

function tabularFile(dir: string, component: string, n: number, payload: (i: number) => Record<string, unknown> = (i) => ({ readings: { i } })): string {
  const header: CaptureFileHeader = {
    upload_id: randomUUID(),
    component_type: 'core:component:sensor',
    component_name: component,
    method_name: 'Readings',
    method_parameters: {},
    tags: ['file-tag'],
    kind: 'tabular',
  };
  const writer = new CaptureFileWriter(join(dir, randomUUID()), header);
  for (let i = 0; i < n; i++) {
    const t = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
    writer.append(SensorData.encode({ metadata: { timeRequested: t, timeReceived: t, mimeType: '' }, struct: payload(i) }).finish());
  }
  return writer.close()!;
}

function binaryFile(dir: string, component: string, n: number): string {
  const header: CaptureFileHeader = {
    upload_id: randomUUID(),
    component_type: 'core:component:camera',
    component_name: component,
    method_name: 'GetImage',
    method_parameters: {},
    tags: [],
    kind: 'binary',
  };
  const writer = new CaptureFileWriter(join(dir, randomUUID()), header);
  for (let i = 0; i < n; i++) {
    const t = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
    writer.append(SensorData.encode({ metadata: { timeRequested: t, timeReceived: t, mimeType: 'image/jpeg' }, binary: Buffer.from(`jpeg ${i}`) }).finish());
  }
  return writer.close()!;
}

const partAccess = () => ({
  partId: fx.machineA1.part_id,
  appAddress: fx.cloud.address,
  credentials: { type: 'robot-secret' as const, entity: fx.machineA1.part_id, payload: fx.machineA1.part_secret },
  allowInsecure: false,
});
const reader = () => fx.client(fx.keys.ownerA).dataClient;

test('closed files are uploaded with the tags and deleted; a re-sent file is not stored twice', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sync-'));
  const tabular = tabularFile(dir, 'sync-once', 50);
  const binary = binaryFile(dir, 'sync-once-cam', 3);
  const tabularBytes = readFileSync(tabular);
  const binaryBytes = readFileSync(binary);
  const cloud = connectPartCloud(partAccess());
  const syncer = new Syncer({ captureDir: dir, additionalSyncPaths: [], tags: ['dm-tag'], threads: 2, cloud, log: quiet });
  await syncer.syncOnce();
  t.false(existsSync(tabular));
  t.false(existsSync(binary));
  t.is(syncer.status.uploaded_items, 53);
  t.is(syncer.status.files_waiting, 0);
  t.is(syncer.status.last_error, null);
  t.truthy(syncer.status.last_successful_sync);
  // A crash after the cloud's answer and before the delete: the files are there again at the next start.
  writeFileSync(tabular, tabularBytes);
  writeFileSync(binary, binaryBytes);
  await syncer.syncOnce();
  t.false(existsSync(tabular));
  const data = reader();
  t.is((await data.tabularDataByFilter({ componentName: 'sync-once' }, { countOnly: true })).count, 50);
  const images = await data.binaryDataByFilter({ componentName: 'sync-once-cam' }, { includeBinary: false });
  t.is(images.data.length, 3);
  for (const image of images.data) {
    t.is(image.metadata!.captureMetadata!.mimeType, 'image/jpeg');
    t.deepEqual(image.metadata!.captureMetadata!.tags, ['dm-tag']);
  }
  const page = await data.tabularDataByFilter({ componentName: 'sync-once' }, { limit: 1 });
  t.deepEqual([...page.data[0].metadata.tags].sort(), ['dm-tag', 'file-tag']);
  cloud.close();
});

test('a cloud that refuses an upload keeps the file and reports the error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sync-'));
  // Sensor data without the key "readings" is INVALID_ARGUMENT at the cloud.
  const file = tabularFile(dir, 'sync-refused', 3, (i) => ({ value: i }));
  const cloud = connectPartCloud(partAccess());
  const syncer = new Syncer({ captureDir: dir, additionalSyncPaths: [], tags: [], threads: 1, cloud, log: quiet });
  await syncer.syncOnce();
  t.true(existsSync(file));
  t.regex(syncer.status.last_error!, /sync of .* failed: 3 INVALID_ARGUMENT: sensor_contents\[0\]\.struct must have the key "readings"/);
  t.is(syncer.status.files_waiting, 1);
  t.true(syncer.nextRetryAt > 0);
  cloud.close();
});

test('wrong part credentials keep the file and report UNAUTHENTICATED', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sync-'));
  const file = tabularFile(dir, 'sync-badcreds', 2);
  const cloud = connectPartCloud({ ...partAccess(), credentials: { type: 'robot-secret', entity: fx.machineA1.part_id, payload: 'wrong' } });
  const syncer = new Syncer({ captureDir: dir, additionalSyncPaths: [], tags: [], threads: 1, cloud, log: quiet });
  await syncer.syncOnce();
  t.true(existsSync(file));
  t.regex(syncer.status.last_error!, /UNAUTHENTICATED/);
  cloud.close();
});

test('an unreachable cloud keeps the files and the retries back off exponentially', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sync-'));
  const file = tabularFile(dir, 'sync-down', 2);
  const cloud = connectPartCloud({ ...partAccess(), appAddress: '127.0.0.1:1' });
  const syncer = new Syncer({ captureDir: dir, additionalSyncPaths: [], tags: [], threads: 1, cloud, log: quiet });
  const backoffs: number[] = [];
  for (let i = 0; i < 3; i++) {
    while (Date.now() < syncer.nextRetryAt) await new Promise((r) => setTimeout(r, 50));
    await syncer.syncOnce();
    backoffs.push(syncer.backoffMs);
  }
  t.deepEqual(backoffs, [INITIAL_BACKOFF_MS, 2 * INITIAL_BACKOFF_MS, 4 * INITIAL_BACKOFF_MS]);
  t.true(existsSync(file));
  t.regex(syncer.status.last_error!, /UNAVAILABLE/);
  cloud.close();
});

test('additional_sync_paths files are uploaded as files, then removed; a re-send is not stored twice', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sync-'));
  const extra = join(mkdtempSync(join(tmpdir(), 'sync-extra-')), 'logs');
  mkdirSync(extra);
  const path = join(extra, 'run-h16.log');
  writeFileSync(path, 'a log line\n');
  const old = new Date(Date.now() - 60_000);
  utimesSync(path, old, old); // settled: not being written any more
  const cloud = connectPartCloud(partAccess());
  const syncer = new Syncer({ captureDir: dir, additionalSyncPaths: [extra], tags: ['logs'], threads: 1, cloud, log: quiet });
  await syncer.syncOnce();
  t.false(existsSync(path));
  writeFileSync(path, 'a log line\n');
  utimesSync(path, old, old);
  await syncer.syncOnce();
  const files = await reader().binaryDataByFilter({ tagsFilter: { tags: ['logs'] } }, { includeBinary: true });
  const ours = files.data.filter((f) => f.metadata!.fileName === 'run-h16.log');
  t.is(ours.length, 1);
  t.is(String(ours[0].binary), 'a log line\n');
  cloud.close();
});
