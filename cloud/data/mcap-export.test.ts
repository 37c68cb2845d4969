// ExportMcap through the TypeScript client against a spawned platform-cloud; the file is read back
// with every CRC checked (cloud/data/testing/read-mcap.ts).
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataClient } from '../client/data-client.js';
import { call, partClients } from '../parts/testing/part-clients.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { noisyJpeg, noisyPng } from '../web/testing-images.js';
import { readMcap } from './testing/read-mcap.js';

let fx: CloudFixture;
let data: DataClient;
let dir: string;

test.before(async () => {
  fx = await startFixture();
  data = fx.client(fx.keys.ownerA).dataClient;
  dir = mkdtempSync(join(tmpdir(), 'mcap-export-'));
});
test.after.always(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const pair = (s: number) => [at(s), at(s)] as [Date, Date];

test.serial('N readings and M images read back with CRCs: messageCount N + M, foxglove and platform schemas, time order', async (t) => {
  const part = fx.machineA1.part_id;
  const tags = ['mcap-one'];
  // N = 6 readings in two uploads, M = 3 images, interleaved in time.
  await data.tabularDataCaptureUpload(
    [{ readings: { c: 20 } }, { readings: { c: 21 } }, { readings: { c: 22 } }],
    part,
    'rdk:component:sensor',
    'thermo',
    'Readings',
    [pair(1), pair(4), pair(7)],
    tags,
  );
  await data.tabularDataCaptureUpload(
    [{ readings: { h: 50 } }, { readings: { h: 51 } }, { readings: { h: 52 } }],
    part,
    'rdk:component:sensor',
    'hygro',
    'Readings',
    [pair(2), pair(5), pair(8)],
    tags,
  );
  const png = noisyPng(16, 8);
  await data.binaryDataCaptureUpload(png, part, 'rdk:component:camera', 'cam', 'GetImages', '.png', pair(3), tags);
  await data.binaryDataCaptureUpload(noisyJpeg(16, 8), part, 'rdk:component:camera', 'cam', 'GetImages', '.jpg', pair(6), tags);
  await data.binaryDataCaptureUpload(noisyPng(4, 4), part, 'rdk:component:camera', 'cam', 'GetImages', '.png', pair(9), tags);
  // Data outside the filter stays out.
  await data.tabularDataCaptureUpload([{ readings: { c: 99 } }], part, 'rdk:component:sensor', 'thermo', 'Readings', [pair(5)], ['other']);

  const file = join(dir, 'one.mcap');
  const res = await data.exportMcap({ tagsFilter: { tags } }, file);
  const bytes = readFileSync(file);
  t.is(res.bytes, bytes.length);
  const mcap = await readMcap(bytes);
  t.is(mcap.messageCount, 9n);
  t.is(mcap.indexed, 9);
  t.is(mcap.messages.length, 9);
  t.deepEqual(mcap.chunkCompressions, ['zstd']);
  t.deepEqual(mcap.schemas, ['foxglove.CompressedImage', 'platform.TabularReading']);
  t.true(mcap.channels.every((c) => /^(foxglove|platform)\./.test(c.schema) && c.messageEncoding === 'json'));
  t.deepEqual([...new Set(mcap.channels.map((c) => c.topic))].sort(), ['/cam/GetImages', '/hygro/Readings', '/thermo/Readings']);
  const times = mcap.messages.map((m) => m.logTime);
  t.deepEqual(
    times,
    [...times].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  t.deepEqual(
    mcap.messages.map((m) => Number(m.logTime / 1_000_000_000n) - at(0).getTime() / 1000),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  const first = mcap.messages[0].body;
  t.like(first, { part_id: part, component_name: 'thermo', method_name: 'Readings', data: { readings: { c: 20 } } });
  t.deepEqual(first.timestamp, { sec: at(1).getTime() / 1000, nsec: 0 });
  const image = mcap.messages[2].body as { format: string; frame_id: string; data: string };
  t.is(image.format, 'png');
  t.is(image.frame_id, 'cam');
  t.deepEqual(new Uint8Array(Buffer.from(image.data, 'base64')), png);
  t.is((mcap.messages[5].body as { format: string }).format, 'jpeg');
});

const pcd = Buffer.from(
  [
    '# .PCD v0.7',
    'VERSION 0.7',
    'FIELDS x y z',
    'SIZE 4 4 4',
    'TYPE F F F',
    'COUNT 1 1 1',
    'WIDTH 2',
    'HEIGHT 1',
    'VIEWPOINT 0 0 0 1 0 0 0',
    'POINTS 2',
    'DATA ascii',
    '1 2 3',
    '4 5 6.5',
    '',
  ].join('\n'),
);

test.serial("a part's point clouds are foxglove.PointCloud and its logs foxglove.Log", async (t) => {
  const machine = fx.machineA2;
  await data.tabularDataCaptureUpload([{ readings: { v: 1 } }], machine.part_id, 'rdk:component:sensor', 'volt', 'Readings', [pair(10)]);
  await data.binaryDataCaptureUpload(pcd, machine.part_id, 'rdk:component:camera', 'lidar', 'NextPointCloud', '.pcd', pair(11));
  const robot = await partClients(fx.cloud.address, { partId: machine.part_id, secret: machine.part_secret });
  try {
    // Log lines are kept 30 days, so these are stamped now rather than in January.
    const line = (ms: number, level: string, message: string) => ({ time: new Date(Date.now() - ms), level, loggerName: 'rover.motor', message, fields: {} });
    await call(robot.robot.log.bind(robot.robot), { id: machine.part_id, logs: [line(2000, 'warn', 'stalled'), line(1000, 'info', 'moving')] }, robot.md);
  } finally {
    robot.close();
  }
  const file = join(dir, 'part.mcap');
  await data.exportMcap({ partId: machine.part_id }, file);
  const mcap = await readMcap(readFileSync(file));
  t.deepEqual(mcap.schemas, ['foxglove.Log', 'foxglove.PointCloud', 'platform.TabularReading']);
  const cloud = mcap.messages.find((m) => m.schema === 'foxglove.PointCloud')!;
  t.is(cloud.topic, '/lidar/NextPointCloud');
  const body = cloud.body as { point_stride: number; fields: { name: string; offset: number; type: number }[]; data: string };
  t.is(body.point_stride, 12);
  t.deepEqual(
    body.fields.map((f) => [f.name, f.offset, f.type]),
    [
      ['x', 0, 7],
      ['y', 4, 7],
      ['z', 8, 7],
    ],
  );
  const raw = Buffer.from(body.data, 'base64');
  t.deepEqual(
    Array.from({ length: 6 }, (_, i) => raw.readFloatLE(i * 4)),
    [1, 2, 3, 4, 5, 6.5],
  );
  const logs = mcap.messages.filter((m) => m.schema === 'foxglove.Log');
  t.is(mcap.messageCount, BigInt(mcap.messages.length));
  t.true(logs.every((l) => l.topic === `/log/arm-main`));
  t.deepEqual(
    logs.map((l) => [(l.body as { level: number }).level, (l.body as { message: string }).message, (l.body as { name: string }).name]),
    [
      [3, 'stalled', 'rover.motor'],
      [2, 'moving', 'rover.motor'],
    ],
  );
});

test.serial('bad filters and other organizations are refused', async (t) => {
  const other = fx.client(fx.keys.ownerB).dataClient;
  const err = await t.throwsAsync(other.exportMcap({ organizationIds: [fx.orgA] }, join(dir, 'no.mcap')));
  t.is(codeOf(err), status.PERMISSION_DENIED);
  const bad = await t.throwsAsync(data.exportMcap({ startTime: at(5), endTime: at(1) }, join(dir, 'no.mcap')));
  t.is(codeOf(bad), status.INVALID_ARGUMENT);
  // Nothing selected: an empty but valid MCAP.
  await data.exportMcap({ componentName: 'nothing-here' }, join(dir, 'empty.mcap'));
  const empty = await readMcap(readFileSync(join(dir, 'empty.mcap')));
  t.is(empty.messageCount, 0n);
});
