// Hostile-tenant suite, issue 27 finding 5: DataCaptureUpload is capped while it is decoded (points and
// values per request) and by request bytes in flight per principal. Against the real platform-cloud: 16M
// empty points (4 bytes each on the wire, 61 MiB) sent twice at once are refused naming the field and the
// limit, the cloud's RSS stays bounded, and another organization's reads and uploads keep being served.
import test from 'ava';
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { DataType, UploadMetadata } from '../../gen/platform/app/datasync/v1/data_sync.js';
import { startFixture, type CloudFixture, type Machine } from '../testing/tenancy-fixture.js';

const MAX_POINTS = 1000;
const MAX_VALUES = 20_000;

let fx: CloudFixture;
let raw: Client;
test.before(async () => {
  fx = await startFixture({ PLATFORM_UPLOAD_MAX_POINTS: String(MAX_POINTS), PLATFORM_UPLOAD_MAX_VALUES: String(MAX_VALUES) });
  raw = new Client(fx.cloud.address, credentials.createInsecure(), { 'grpc.max_send_message_length': 64 * 1024 * 1024 });
});
test.after.always(async () => {
  raw?.close();
  await fx?.close();
});

const rssMb = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${fx.cloud.child.pid}/status`, 'utf8'))![1]) / 1024;

function field(tag: number, payload: Uint8Array): Buffer {
  const length: number[] = [];
  let n = payload.byteLength;
  while (n > 0x7f) {
    length.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  length.push(n);
  return Buffer.concat([Buffer.from([tag, ...length]), payload]);
}

/** A DataCaptureUploadRequest's bytes: tabular metadata for `machine`, then the given encoded items. */
function requestBytes(machine: Machine, items: Buffer): Buffer {
  const metadata = UploadMetadata.encode({
    partId: machine.part_id,
    componentType: 'rdk:component:sensor',
    componentName: 'thermo',
    methodName: 'Readings',
    type: DataType.DATA_TYPE_TABULAR_SENSOR,
    fileName: '',
    methodParameters: undefined,
    fileExtension: '',
    tags: [],
    datasetIds: [],
    mimeType: '',
    uploadId: '',
  }).finish();
  return Buffer.concat([field(0x0a, metadata), items]);
}

/** n items, each SensorData{struct: {readings: {v: i}}} (no times: the cloud stamps them). */
function points(n: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const v = Buffer.alloc(9);
    v[0] = 0x11; // Value.number_value
    v.writeDoubleLE(i, 1);
    const inner = field(0x0a, Buffer.concat([field(0x0a, Buffer.from('v')), field(0x12, v)]));
    const readings = field(0x0a, Buffer.concat([field(0x0a, Buffer.from('readings')), field(0x12, field(0x2a, inner))]));
    parts.push(field(0x12, field(0x12, readings)));
  }
  return Buffer.concat(parts);
}

async function send(machine: Machine, body: Buffer): Promise<ServiceError | undefined> {
  const md: Metadata = await fx.partClient(machine).connection.metadata();
  return new Promise((resolve) =>
    raw.makeUnaryRequest(
      '/platform.app.datasync.v1.DataSyncService/DataCaptureUpload',
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      md,
      (err) => resolve(err ?? undefined),
    ),
  );
}

test.serial('up to PLATFORM_UPLOAD_MAX_POINTS points are stored; one more is INVALID_ARGUMENT naming the field and the limit', async (t) => {
  t.is(await send(fx.machineA1, requestBytes(fx.machineA1, points(MAX_POINTS))), undefined);
  const err = await send(fx.machineA1, requestBytes(fx.machineA1, points(MAX_POINTS + 1)));
  t.is(err?.code, status.INVALID_ARGUMENT, err?.details);
  t.regex(err!.details, new RegExp(`sensor_contents: more than ${MAX_POINTS} items in one request \\(PLATFORM_UPLOAD_MAX_POINTS\\)`));
});

test.serial('a point with more values than PLATFORM_UPLOAD_MAX_VALUES is INVALID_ARGUMENT naming the point and the limit', async (t) => {
  // One point whose readings are a list of 30,000 empty values: 4 bytes each on the wire.
  const list = Buffer.concat(Array.from({ length: 30_000 }, () => Buffer.from([0x0a, 0x02, 0x08, 0x00])));
  const readings = field(0x0a, Buffer.concat([field(0x0a, Buffer.from('readings')), field(0x12, field(0x32, list))]));
  const err = await send(fx.machineA1, requestBytes(fx.machineA1, Buffer.concat([points(3), field(0x12, field(0x12, readings))])));
  t.is(err?.code, status.INVALID_ARGUMENT, err?.details);
  t.regex(err!.details, new RegExp(`sensor_contents\\[3\\]: the request holds more than ${MAX_VALUES} values .*PLATFORM_UPLOAD_MAX_VALUES`));
});

test.serial('16M empty points, twice at once: refused naming the limit, bounded RSS, and another organization is served throughout', async (t) => {
  // An empty point: field 2 of the request holding SensorData{struct: {}} — 12 02 12 00.
  const empty = Buffer.alloc(16_000_000 * 4);
  for (let i = 0; i < empty.length; i += 4) empty.set([0x12, 0x02, 0x12, 0x00], i);
  const body = requestBytes(fx.machineA1, empty);
  t.true(body.length < 64 * 1024 * 1024, 'under gRPC 64 MiB message limit, as in the report');
  const baseline = rssMb();
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 20);
  let attacking = true;
  const attack = Promise.all([send(fx.machineA1, body), send(fx.machineA1, body)]).finally(() => (attacking = false));
  // Organization B reads and uploads while the attack runs, and after it.
  const other = fx.partClient(fx.machineB).dataClient;
  const reader = fx.client(fx.keys.ownerB).dataClient;
  let served = 0;
  do {
    const now = new Date();
    await other.tabularDataCaptureUpload([{ readings: { v: served } }], fx.machineB.part_id, 'rdk:component:sensor', 'thermo', 'Readings', [[now, now]]);
    await reader.tabularDataByFilter({ organizationIds: [fx.orgB] }, { limit: 1 });
    served++;
  } while (attacking);
  const outcomes = await attack;
  clearInterval(sampler);
  for (const err of outcomes) {
    t.truthy(err, 'neither is stored');
    const over = err!.code === status.RESOURCE_EXHAUSTED && /PLATFORM_UPLOAD_MAX_INFLIGHT_BYTES_PER_PRINCIPAL/.test(err!.details);
    const points = err!.code === status.INVALID_ARGUMENT && new RegExp(`more than ${MAX_POINTS} items.*PLATFORM_UPLOAD_MAX_POINTS`).test(err!.details);
    t.true(over || points, `${err!.code}: ${err!.details}`);
  }
  t.true(served >= 1);
  t.is(fx.cloud.child.exitCode, null, 'the cloud is alive');
  // The raw requests are buffered by grpc-js (61 MiB each, in frames and then whole); decoded they took 6.2 GB.
  t.true(peak - baseline < 700, `RSS rose ${Math.round(peak - baseline)} MB (from ${Math.round(baseline)} MB)`);
  t.log(`cloud RSS ${Math.round(baseline)} → peak ${Math.round(peak)} MB; organization B served ${served} rounds during the attack`);
  const after = await reader.tabularDataByFilter({ organizationIds: [fx.orgB] }, { limit: 1 });
  t.is(after.data.length, 1);
});
