// A full disk loses no acknowledged reading (issue 29, item 1): a write that fails after writing part of a
// batch (ENOSPC) leaves the capture file as it was, the batch's readings are counted as errors, and every
// record written before and after the disk filled reaches the real cloud exactly once. Once with an
// injected ENOSPC after a partial write, once with a real 1 MiB tmpfs as capture_dir (root only).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { ftruncateSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture, type CloudFixture } from '../../cloud/testing/tenancy-fixture.js';
import { builtinCaptureMethods } from '../../core/resource/capture-methods.js';
import type { SampleBatch, SamplerFunction } from '../../core/workers/port-sampler.js';
import {
  CaptureFileWriter,
  CLOSED_SUFFIX,
  OPEN_SUFFIX,
  readCaptureFile,
  type CaptureFileHeader,
  type CaptureFileIo,
} from '../../core/datamanager/capture-file.js';
import { CaptureLoop } from '../../core/datamanager/capture-loop.js';
import { connectPartCloud } from '../../core/datamanager/part-cloud.js';
import { Syncer } from '../../core/datamanager/sync.js';
import { fill, smallFilesystem } from '../../core/datamanager/testing/small-filesystem.js';

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

/** Real writes, until `room` bytes are used up: then the write that crosses it is partial and the next throws ENOSPC. */
interface FillingDisk {
  room: number;
  truncates: number;
  failTruncate: boolean;
  io: CaptureFileIo;
}

function fillingDisk(): FillingDisk {
  const disk: FillingDisk = {
    room: Infinity,
    truncates: 0,
    failTruncate: false,
    io: {
      writeSync(fd, buffer, offset, length, position) {
        if (disk.room <= 0) throw enospc();
        const written = writeSync(fd, buffer, offset, Math.min(length, disk.room), position);
        disk.room -= written;
        return written;
      },
      ftruncateSync(fd, length) {
        disk.truncates++;
        if (disk.failTruncate) throw Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' });
        ftruncateSync(fd, length);
      },
    },
  };
  return disk;
}

const header: CaptureFileHeader = {
  upload_id: 'u-full',
  component_type: 'core:component:sensor',
  component_name: 's',
  method_name: 'Readings',
  method_parameters: {},
  tags: [],
  kind: 'tabular',
};

test('a write that fails after a partial write leaves the file as it was, and later records stay readable', (t) => {
  const base = join(mkdtempSync(join(tmpdir(), 'full-disk-')), 'f');
  const disk = fillingDisk();
  const writer = new CaptureFileWriter(base, header, disk.io);
  writer.append(Buffer.from('before 1'));
  writer.append(Buffer.from('before 2'));
  const sizeBefore = statSync(base + OPEN_SUFFIX).size;
  disk.room = 5; // part of the next frame's 8-byte head fits, then the disk is full
  t.throws(() => writer.appendFrames([Buffer.from('xxxxxxxxxxxxxxxxxxxxxxxx')], 1), { message: /ENOSPC/ });
  t.is(statSync(base + OPEN_SUFFIX).size, sizeBefore, 'the partial frame was cut again');
  t.is(writer.records, 2);
  t.throws(() => writer.append(Buffer.from('while full')), { message: /ENOSPC/ });
  disk.room = Infinity;
  writer.append(Buffer.from('after 1'));
  writer.append(Buffer.from('after 2'));
  const closed = writer.close()!;
  const contents = readCaptureFile(closed);
  t.false(contents.torn);
  t.deepEqual(contents.records.map(String), ['before 1', 'before 2', 'after 1', 'after 2']);
});

test('a file whose failed write cannot be cut takes no more records; its whole records stay readable', (t) => {
  const base = join(mkdtempSync(join(tmpdir(), 'full-disk-')), 'f');
  const disk = fillingDisk();
  const writer = new CaptureFileWriter(base, header, disk.io);
  writer.append(Buffer.from('kept'));
  disk.room = 3;
  disk.failTruncate = true;
  t.throws(() => writer.append(Buffer.from('torn')), { message: /ENOSPC/ });
  t.true(writer.broken);
  disk.room = Infinity;
  t.throws(() => writer.append(Buffer.from('refused')), { message: /takes no more records/ });
  const contents = readCaptureFile(writer.close()!);
  t.deepEqual(contents.records.map(String), ['kept']);
});

test('a file whose header does not fit is not left behind', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'full-disk-'));
  const disk = fillingDisk();
  disk.room = 10;
  t.throws(() => new CaptureFileWriter(join(dir, 'f'), header, disk.io), { message: /ENOSPC/ });
  t.deepEqual(readdirSync(dir), []);
});

let fx: CloudFixture;
test.before(async () => {
  fx = await startFixture();
});
test.after.always(async () => {
  await fx?.close();
});

const readings = builtinCaptureMethods['core:component:sensor'].Readings;
const sampleAt = (n: number, pad: number) => ({
  requested: 1_764_000_000_000 + n,
  received: 1_764_000_000_001 + n,
  lateMs: 0.1,
  values: [{ n, pad: 'x'.repeat(pad) }],
});

function captureLoop(captureDir: string, resource: string, io?: CaptureFileIo, maxFileBytes = 1 << 30) {
  let deliver: (batch: SampleBatch) => void = () => undefined;
  const sample: SamplerFunction = (_spec, onBatch) => {
    deliver = onBatch;
    return { stop: async () => undefined };
  };
  const capture = new CaptureLoop({
    captureDir,
    resource,
    api: 'core:component:sensor',
    spec: { method: 'Readings', kind: 'tabular', frequencyHz: 50, additionalParams: {}, tags: [] },
    maxFileBytes,
    calls: readings.calls({}),
    shape: (values) => readings.shape(values, {}),
    sample,
    onError: () => undefined,
    io,
  });
  capture.run();
  return { capture, deliver: (b: SampleBatch) => deliver(b) };
}

/** Syncs captureDir with the real cloud and returns the `n` of every reading the cloud holds for `resource`, in order. */
async function syncAndRead(captureDir: string, resource: string): Promise<number[]> {
  const cloud = connectPartCloud({
    partId: fx.machineA1.part_id,
    appAddress: fx.cloud.address,
    credentials: { type: 'robot-secret', entity: fx.machineA1.part_id, payload: fx.machineA1.part_secret },
    allowInsecure: false,
  });
  try {
    const syncer = new Syncer({ captureDir, additionalSyncPaths: [], tags: [], threads: 2, cloud, log: { info: () => undefined, warn: () => undefined } });
    await syncer.syncOnce();
    if (syncer.status.last_error) throw new Error(syncer.status.last_error);
  } finally {
    cloud.close();
  }
  const rows = await fx
    .client(fx.keys.ownerA)
    .dataClient.tabularDataBySQL(fx.orgA, `SELECT data.readings.n::BIGINT AS n FROM readings WHERE component_name = '${resource}' ORDER BY time_requested`);
  return rows.map((r) => Number(r.n));
}

test('an injected ENOSPC after a partial write: every acknowledged reading reaches the cloud exactly once, the others are errors', async (t) => {
  const captureDir = mkdtempSync(join(tmpdir(), 'full-disk-loop-'));
  const resource = `full-injected-${randomUUID().slice(0, 8)}`;
  const disk = fillingDisk();
  const { capture, deliver } = captureLoop(captureDir, resource, disk.io);
  const stored: number[] = [];
  let n = 0;
  for (let b = 0; b < 12; b++) {
    // Batch 4 is cut by the full disk after 100 bytes; 5 and 6 find it full; from 7 on there is room again.
    if (b === 4) disk.room = 100;
    if (b === 7) disk.room = Infinity;
    const before = capture.stats.records;
    const batch = Array.from({ length: 10 }, () => sampleAt(n++, 40));
    deliver({ samples: batch, skipped: 0 });
    if (capture.stats.records > before) stored.push(...batch.map((s) => (s.values[0] as { n: number }).n));
  }
  t.is(capture.stats.records, 90);
  t.is(capture.stats.errors, 30, 'each reading of a failed batch is an error');
  t.regex(capture.stats.last_error!, /ENOSPC/);
  t.true(disk.truncates >= 1);
  await capture.stop();
  t.deepEqual(await syncAndRead(captureDir, resource), stored, 'every acknowledged reading, once, in order');
  rmSync(captureDir, { recursive: true, force: true });
});

test('a real full filesystem (1 MiB tmpfs): readings before and after the disk filled reach the cloud exactly once, the others are errors', async (t) => {
  const fs = smallFilesystem('1m');
  if (!fs) {
    t.log('mounting a tmpfs needs root; covered by the injected ENOSPC test above');
    t.pass();
    return;
  }
  try {
    const captureDir = join(fs.dir, 'capture');
    mkdirSync(captureDir);
    const resource = `full-tmpfs-${randomUUID().slice(0, 8)}`;
    const { capture, deliver } = captureLoop(captureDir, resource, undefined, 64 * 1024);
    const stored: number[] = [];
    let n = 0;
    let batches = 0;
    const batch = () => {
      const samples = Array.from({ length: 10 }, () => sampleAt(n++, 500));
      const before = capture.stats.records;
      deliver({ samples, skipped: 0 });
      batches++;
      if (capture.stats.records > before) stored.push(...samples.map((s) => (s.values[0] as { n: number }).n));
    };
    for (let i = 0; i < 10; i++) batch();
    // Fill the disk, leaving a few KiB: the next batches are cut part-way, then find no room at all.
    const filler = join(fs.dir, 'filler');
    fill(filler, 6000);
    for (let i = 0; i < 10; i++) batch();
    t.true(capture.stats.errors > 0, 'the full disk failed some batches');
    t.regex(capture.stats.last_error!, /ENOSPC/);
    rmSync(filler);
    for (let i = 0; i < 10; i++) batch();
    t.is(capture.stats.records + capture.stats.errors, batches * 10, 'every reading is stored or counted as an error');
    t.true(capture.stats.records > 100, `${capture.stats.records} stored`);
    await capture.stop();
    const closed = readdirSync(join(captureDir, 'sensor', resource, 'Readings')).filter((f) => f.endsWith(CLOSED_SUFFIX));
    for (const f of closed) t.false(readCaptureFile(join(captureDir, 'sensor', resource, 'Readings', f)).torn, `${f} has no torn tail`);
    t.deepEqual(await syncAndRead(captureDir, resource), stored, 'every acknowledged reading, once, in order');
  } finally {
    fs.unmount();
  }
});
