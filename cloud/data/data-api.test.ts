// Every data operation and every SPEC.md error, through the real client against a spawned platform-cloud:
// tabular data, filters, paging, export and deletion here; binary data, files, tags and bounding boxes in
// binary-data-api.test.ts.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Order, TagsFilterType, ValueError } from '../client/index.js';
import type { DataClient } from '../client/data-client.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';
import { CAMERA as camera, SENSOR as sensor, grpcCode, sensorReadings as readings, timePairs as pairs } from '../testing/data-samples.js';

let fx: CloudFixture;
let data: DataClient;
let part: string;
const tmp = mkdtempSync(join(tmpdir(), 'data-api-test-'));
const minute = 60_000;

test.before(async () => {
  fx = await startFixture();
  data = fx.client(fx.keys.ownerA).dataClient;
  part = fx.machineA1.part_id;
});

test.after.always(async () => {
  await fx?.close();
});

test.serial('tabular upload stores one point per data item with the shared metadata', async (t) => {
  const fileId = await data.tabularDataCaptureUpload(readings(3), part, sensor, 'thermo-1', 'Readings', pairs(3), ['lab']);
  t.truthy(fileId);
  const page = await data.tabularDataByFilter({ componentName: 'thermo-1' });
  t.is(page.count, 3);
  t.is(page.data.length, 3);
  // Newest first by default.
  t.deepEqual(
    page.data.map((d) => (d.data.readings as { temperature: number }).temperature),
    [2, 1, 0],
  );
  const meta = page.data[0].metadata;
  t.like(meta, {
    organizationId: fx.orgA,
    locationId: fx.locA1,
    robotId: fx.machineA1.machine_id,
    robotName: 'rover',
    partId: part,
    partName: 'rover-main',
    componentType: sensor,
    componentName: 'thermo-1',
    methodName: 'Readings',
  });
  t.deepEqual(meta.tags, ['lab']);
  t.truthy(page.last);
  t.true(page.totalSizeBytes > 0);
  t.true(page.data[0].timeReceived!.getTime() > page.data[0].timeRequested!.getTime());
});

test.serial('a timestamp pair count that differs from the data item count is a client value error', async (t) => {
  await t.throwsAsync(data.tabularDataCaptureUpload(readings(2), part, sensor, 's', 'Readings', pairs(3)), { instanceOf: ValueError });
});

test.serial('sensor data without the readings key is INVALID_ARGUMENT', async (t) => {
  const err = await t.throwsAsync(data.tabularDataCaptureUpload([{ temperature: 3 }], part, sensor, 's', 'Readings', pairs(1)));
  t.is(codeOf(err), status.INVALID_ARGUMENT);
  t.regex(err!.message, /readings/);
});

test.serial('an invalid part id is a gRPC error for every upload', async (t) => {
  const bad = 'no-such-part';
  t.is(await grpcCode(t, data.tabularDataCaptureUpload(readings(1), bad, sensor, 's', 'Readings', pairs(1))), status.NOT_FOUND);
  t.is(await grpcCode(t, data.binaryDataCaptureUpload(Buffer.from('x'), bad, camera, 'c', 'GetImages', '.jpg', [new Date(), new Date()])), status.NOT_FOUND);
  t.is(await grpcCode(t, data.fileUpload(Buffer.from('x'), bad)), status.NOT_FOUND);
  t.is(await grpcCode(t, data.streamingDataCaptureUpload(Buffer.from('x'), bad, '.bin')), status.NOT_FOUND);
  t.is(await grpcCode(t, data.tabularDataCaptureUpload(readings(1), '', sensor, 's', 'Readings', pairs(1))), status.INVALID_ARGUMENT);
});

test.serial('pages follow the last cursor in both orders until an empty page', async (t) => {
  await data.tabularDataCaptureUpload(readings(7), part, sensor, 'paged', 'Readings', pairs(7));
  for (const [sortOrder, expected] of [
    [Order.ORDER_ASCENDING, [0, 1, 2, 3, 4, 5, 6]],
    [Order.ORDER_DESCENDING, [6, 5, 4, 3, 2, 1, 0]],
  ] as const) {
    const seen: number[] = [];
    const sizes: number[] = [];
    let last = '';
    for (;;) {
      const page = await data.tabularDataByFilter({ componentName: 'paged' }, { limit: 3, sortOrder, last });
      if (page.data.length === 0) break;
      sizes.push(page.data.length);
      seen.push(...page.data.map((d) => (d.data.readings as { temperature: number }).temperature));
      last = page.last;
    }
    t.deepEqual(sizes, [3, 3, 1]);
    t.deepEqual(seen, [...expected]);
  }
});

test.serial('the limit defaults to 50, count_only counts everything, and a bad cursor or limit is INVALID_ARGUMENT', async (t) => {
  await data.tabularDataCaptureUpload(readings(60), part, sensor, 'many', 'Readings', pairs(60));
  const first = await data.tabularDataByFilter({ componentName: 'many' });
  t.is(first.data.length, 50);
  const counted = await data.tabularDataByFilter({ componentName: 'many' }, { countOnly: true });
  t.is(counted.count, 60);
  t.is(counted.data.length, 0);
  t.is(await grpcCode(t, data.tabularDataByFilter({}, { last: 'not-a-cursor' })), status.INVALID_ARGUMENT);
  t.is(await grpcCode(t, data.tabularDataByFilter({}, { limit: -1 })), status.INVALID_ARGUMENT);
});

test.serial('filter fields combine with AND; tags filters match by OR, tagged and untagged', async (t) => {
  const part2 = fx.machineA2.part_id;
  const base = Date.now() - 10 * minute;
  await data.tabularDataCaptureUpload(readings(1), part, sensor, 'f-a', 'Readings', pairs(1, base), ['red']);
  await data.tabularDataCaptureUpload(readings(1), part, 'rdk:component:movement_sensor', 'f-b', 'Position', pairs(1, base + minute), ['blue']);
  await data.tabularDataCaptureUpload(readings(1), part2, sensor, 'f-c', 'Readings', pairs(1, base + 2 * minute));
  const names = async (filter: Parameters<DataClient['tabularDataByFilter']>[0]) =>
    (await data.tabularDataByFilter({ ...filter, startTime: new Date(base - 1), endTime: new Date(base + 3 * minute) })).data
      .map((d) => d.metadata.componentName)
      .sort();
  t.deepEqual(await names({}), ['f-a', 'f-b', 'f-c']);
  t.deepEqual(await names({ componentName: 'f-a' }), ['f-a']);
  t.deepEqual(await names({ componentType: sensor }), ['f-a', 'f-c']);
  t.deepEqual(await names({ method: 'Position' }), ['f-b']);
  t.deepEqual(await names({ robotName: 'arm' }), ['f-c']);
  t.deepEqual(await names({ robotId: fx.machineA1.machine_id }), ['f-a', 'f-b']);
  t.deepEqual(await names({ partName: 'arm-main' }), ['f-c']);
  t.deepEqual(await names({ partId: part2 }), ['f-c']);
  t.deepEqual(await names({ locationIds: [fx.locA2] }), ['f-c']);
  t.deepEqual(await names({ organizationIds: [fx.orgA] }), ['f-a', 'f-b', 'f-c']);
  t.deepEqual(await names({ componentType: sensor, robotName: 'rover' }), ['f-a']);
  t.deepEqual(await names({ tagsFilter: { type: TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR, tags: ['red', 'blue'] } }), ['f-a', 'f-b']);
  t.deepEqual(await names({ tagsFilter: { tags: ['blue'] } }), ['f-b']);
  t.deepEqual(await names({ tagsFilter: { type: TagsFilterType.TAGS_FILTER_TYPE_TAGGED } }), ['f-a', 'f-b']);
  t.deepEqual(await names({ tagsFilter: { type: TagsFilterType.TAGS_FILTER_TYPE_UNTAGGED } }), ['f-c']);
  // The interval: start inclusive, end exclusive.
  const only = await data.tabularDataByFilter({ startTime: new Date(base + minute), endTime: new Date(base + 2 * minute) });
  t.deepEqual(
    only.data.map((d) => d.metadata.componentName),
    ['f-b'],
  );
  t.is(await grpcCode(t, data.tabularDataByFilter({ startTime: new Date(base + minute), endTime: new Date(base) })), status.INVALID_ARGUMENT);
  t.is(await grpcCode(t, data.tabularDataByFilter({ bboxLabels: ['cat'] })), status.INVALID_ARGUMENT);
});

test.serial('internal data is hidden unless include_internal_data is set', async (t) => {
  await data.tabularDataCaptureUpload(readings(1), part, sensor, 'internal-src', 'Readings', pairs(1), ['platform:internal']);
  t.is((await data.tabularDataByFilter({ componentName: 'internal-src' })).data.length, 0);
  t.is((await data.tabularDataByFilter({ componentName: 'internal-src' }, { includeInternalData: true })).data.length, 1);
  // For binary data the marker tag can also come and go later.
  const id = await data.fileUpload(Buffer.from('m'), part, { fileName: 'map.bin', componentName: 'internal-bin' });
  t.is((await data.binaryDataByFilter({ componentName: 'internal-bin' })).data.length, 1);
  await data.addTagsToBinaryDataByIds(['platform:internal'], [id]);
  t.is((await data.binaryDataByFilter({ componentName: 'internal-bin' })).data.length, 0);
  t.is((await data.binaryDataByFilter({ componentName: 'internal-bin' }, { includeInternalData: true })).data.length, 1);
  await data.removeTagsFromBinaryDataByIds(['platform:internal'], [id]);
  t.is((await data.binaryDataByFilter({ componentName: 'internal-bin' })).data.length, 1);
});

test.serial('GetLatestTabularData returns the newest point, or null when the source has none', async (t) => {
  const base = Date.now() - 30_000;
  await data.tabularDataCaptureUpload([{ readings: { v: 1 } }, { readings: { v: 2 } }], part, sensor, 'latest-src', 'Readings', pairs(2, base));
  const latest = await data.getLatestTabularData(part, 'latest-src', sensor, 'Readings');
  t.deepEqual(latest?.payload, { readings: { v: 2 } });
  t.is(latest?.timeCaptured.getTime(), base + 1000);
  t.true(latest!.timeSynced.getTime() >= base);
  t.is(await data.getLatestTabularData(part, 'silent-src', sensor, 'Readings'), null);
  t.is(await grpcCode(t, data.getLatestTabularData('no-part', 'latest-src', sensor, 'Readings')), status.NOT_FOUND);
});

test.serial('ExportTabularData streams every point of a source with its metadata, within the interval', async (t) => {
  const base = Date.now() - 60_000;
  await data.tabularDataCaptureUpload(readings(5), part, sensor, 'export-src', 'Readings', pairs(5, base), ['exp']);
  const all = await data.exportTabularData(part, 'export-src', sensor, 'Readings');
  t.is(all.length, 5);
  t.like(all[0], {
    partId: part,
    resourceName: 'export-src',
    resourceSubtype: sensor,
    methodName: 'Readings',
    organizationId: fx.orgA,
    robotName: 'rover',
    partName: 'rover-main',
  });
  t.deepEqual(all[0].tags, ['exp']);
  t.deepEqual(
    all.map((p) => (p.payload!.readings as { temperature: number }).temperature),
    [0, 1, 2, 3, 4],
  );
  const some = await data.exportTabularData(part, 'export-src', sensor, 'Readings', new Date(base + 1000), new Date(base + 3000));
  t.deepEqual(
    some.map((p) => (p.payload!.readings as { temperature: number }).temperature),
    [1, 2],
  );
});

test.serial('dest writes the results to a file', async (t) => {
  const dest = join(tmp, 'out.json');
  await data.tabularDataByFilter({ componentName: 'thermo-1' }, { dest });
  const written = JSON.parse(readFileSync(dest, 'utf8')) as { data: unknown[]; count: number };
  t.is(written.count, 3);
  t.is(written.data.length, 3);
  // Binary content is written as base64, not as {"type":"Buffer","data":[...]}.
  const content = Buffer.from('binary \u0000\u00ff content');
  const id = await data.fileUpload(content, part, { fileName: 'dest.bin' });
  const binDest = join(tmp, 'bin.json');
  await data.binaryDataByIds([id], { dest: binDest });
  const text = readFileSync(binDest, 'utf8');
  t.false(text.includes('"type": "Buffer"'));
  t.true(text.includes(`"${content.toString('base64')}"`));
});

test.serial('DeleteTabularData deletes data older than the given days, and 0 deletes everything', async (t) => {
  const old = Date.now() - 10 * 24 * 3600_000;
  await data.tabularDataCaptureUpload(readings(2), part, sensor, 'aging', 'Readings', pairs(2, old));
  await data.tabularDataCaptureUpload(readings(1), part, sensor, 'aging', 'Readings', pairs(1));
  const all = { countOnly: true, includeInternalData: true };
  const before = (await data.tabularDataByFilter({}, all)).count;
  t.is(await data.deleteTabularData(fx.orgA, 5), 2);
  t.is((await data.tabularDataByFilter({}, all)).count, before - 2);
  t.is(await data.deleteTabularData(fx.orgA, 0), before - 2);
  t.is((await data.tabularDataByFilter({}, { countOnly: true, includeInternalData: true })).count, 0);
  await t.throwsAsync(data.deleteTabularData(fx.orgA, -1), { instanceOf: ValueError });
  t.is(await grpcCode(t, data.deleteTabularData(fx.orgA, 2_000_000)), status.INVALID_ARGUMENT);
});

test.serial('a capture time outside the representable range is INVALID_ARGUMENT naming the field', async (t) => {
  const client = fx.client(fx.keys.ownerA);
  const md = await client.connection.metadata();
  // A Date-like value whose time the generated encoder writes as seconds = 1e15, beyond any Date.
  const farFuture = { getTime: () => 1e18 } as unknown as Date;
  const err = await new Promise<Error | null>((resolve) =>
    client.dataClient.dataSync.dataCaptureUpload(
      {
        metadata: {
          partId: part,
          componentType: sensor,
          componentName: 'far',
          methodName: 'Readings',
          type: 2,
          fileName: '',
          fileExtension: '',
          tags: [],
          datasetIds: [],
          mimeType: '',
          uploadId: '',
        },
        sensorContents: [{ metadata: { timeRequested: farFuture, timeReceived: farFuture, mimeType: '' }, struct: { readings: { a: 1 } } }],
      },
      md,
      (e) => resolve(e),
    ),
  );
  t.is(codeOf(err), status.INVALID_ARGUMENT);
  t.regex(err!.message, /time_requested is not a valid timestamp/);
});
