// The hostile-tenant suite, malformed and oversized requests (issue 27, finding 11): forged page tokens
// and filters with 100,000 items are INVALID_ARGUMENT naming the field (never INTERNAL, never a stack
// overflow), a Struct key "__proto__" is kept as data (never a prototype), and a malformed percent-encoding on the cloud's web
// port is 400. After each input the cloud still answers a normal read.
import test, { type ExecutionContext } from 'ava';
import { status } from '@grpc/grpc-js';
import { Order, TagsFilterType } from '../../gen/platform/app/data/v1/data.js';
import { call, partClients, type PartClients } from '../parts/testing/part-clients.js';
import { codeOf, startFixture, type CloudFixture } from '../testing/tenancy-fixture.js';

let fx: CloudFixture;
let reader: PartClients;
const b64 = (text: string) => Buffer.from(text).toString('base64url');
const when = () => [new Date(Date.now() - 1000), new Date()] as [Date, Date];

test.before(async () => {
  fx = await startFixture();
  const owner = fx.client(fx.keys.ownerA).dataClient;
  await owner.tabularDataCaptureUpload([{ readings: { v: 1 } }], fx.machineA1.part_id, 'rdk:component:sensor', 'thermo', 'Readings', [when()]);
  await owner.binaryDataCaptureUpload(Buffer.from('x'), fx.machineA1.part_id, 'rdk:component:camera', 'cam', 'GetImages', '.png', when(), ['t']);
  reader = await partClients(fx.cloud.address, fx.keys.ownerA);
});
test.after.always(async () => {
  reader?.close();
  await fx?.close();
});

async function refused(t: ExecutionContext, promise: Promise<unknown>, field: RegExp, what: string) {
  const err = await t.throwsAsync(promise, undefined, what);
  t.is(codeOf(err), status.INVALID_ARGUMENT, `${what}: ${err?.message}`);
  if (err) t.regex(err.message, field, what);
}

async function stillAnswers(t: ExecutionContext, what: string) {
  t.is(fx.cloud.child.exitCode, null, `${what}: the cloud is running`);
  const { data } = await fx.client(fx.keys.ownerA).dataClient.tabularDataByFilter({ componentName: 'thermo' });
  t.is(data.length, 1, `${what}: a normal read answers`);
}

test.serial('forged page tokens are INVALID_ARGUMENT naming the field', async (t) => {
  const data = fx.client(fx.keys.ownerA).dataClient;
  const lasts = [b64('99999999999999999999999:1'), b64('1:99999999999999999999999'), b64('-99999999999999999999:1'), b64('9223372036854775807:1')];
  for (const last of lasts) {
    await refused(t, data.tabularDataByFilter({}, { last }), /last/, `tabular last ${last}`);
    await refused(t, data.binaryDataByFilter({}, { last }), /last/, `binary last ${last}`);
  }
  // The extremes that are still timestamps are valid tokens: nothing is after the latest (ascending) or
  // before the earliest (descending), and everything is on the other side.
  const latest = b64('9223372036854775806:1');
  const earliest = b64('-9223372036854775807:9223372036854775807');
  const ascending = { sortOrder: Order.ORDER_ASCENDING };
  t.is((await data.tabularDataByFilter({}, { last: latest, ...ascending })).data.length, 0);
  t.is((await data.binaryDataByFilter({}, { last: latest })).data.length, 1);
  t.is((await data.binaryDataByFilter({}, { last: earliest })).data.length, 0);
  t.is((await data.tabularDataByFilter({}, { last: earliest, ...ascending })).data.length, 1);
  const tokens = [
    b64(JSON.stringify({ t: 1.5, s: '1' })),
    b64(JSON.stringify({ t: 1e300, s: '1' })),
    b64(JSON.stringify({ t: 1, s: '99999999999999999999999' })),
    b64('null'),
    b64('[]'),
  ];
  for (const pageToken of tokens) {
    await refused(
      t,
      call(reader.app.getRobotPartLogs.bind(reader.app), { id: fx.machineA1.part_id, levels: [], filter: '', pageToken, limit: 10 }, reader.md),
      /page_token/,
      `log page_token ${Buffer.from(pageToken, 'base64url').toString()}`,
    );
  }
  await stillAnswers(t, 'page tokens');
});

test.serial('a filter of 100,000 tags (or other items) is INVALID_ARGUMENT naming the field and the limit', async (t) => {
  const data = fx.client(fx.keys.ownerA).dataClient;
  const many = Array.from({ length: 100_000 }, (_, i) => `tag-${i}`);
  const byOr = { type: TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR, tags: many };
  await refused(t, data.tabularDataByFilter({ tagsFilter: byOr }), /filter\.tags_filter\.tags: at most 1000 items, got 100000/, 'tabular tags');
  await refused(t, data.binaryDataByFilter({ tagsFilter: byOr }), /filter\.tags_filter\.tags: at most 1000/, 'binary tags');
  await refused(t, data.tagsByFilter({ tagsFilter: byOr }), /filter\.tags_filter\.tags: at most 1000/, 'tags by filter');
  await refused(t, data.binaryDataByFilter({ locationIds: many }), /filter\.location_ids: at most 1000/, 'location ids');
  await refused(t, data.binaryDataByFilter({ mimeType: many }), /filter\.mime_type: at most 1000/, 'mime types');
  await refused(t, data.binaryDataByFilter({ bboxLabels: many }), /filter\.bbox_labels: at most 1000/, 'bbox labels');
  await refused(t, data.addTagsToBinaryDataByFilter(many, { componentName: 'cam' }), /tags: at most 1000/, 'tags to add');
  // Log levels: only six exist, so a long list is read as the set it names (not one placeholder each).
  const levels = Array.from({ length: 100_000 }, () => 'info');
  const logs = await call(reader.app.getRobotPartLogs.bind(reader.app), { id: fx.machineA1.part_id, levels, filter: '', pageToken: '', limit: 10 }, reader.md);
  t.deepEqual(logs.logs, []);
  await stillAnswers(t, '100,000 items');

  // Up to the limit, the filter works (and is not built by recursion).
  const limit = Array.from({ length: 1000 }, (_, i) => (i === 999 ? 't' : `tag-${i}`));
  t.is((await data.binaryDataByFilter({ tagsFilter: { type: TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR, tags: limit } })).data.length, 1);
  t.is((await data.binaryDataByFilter({ mimeType: [...limit.slice(0, 999), 'image/png'] })).data.length, 1);
});

test.serial('a Struct key "__proto__" is stored and read back as data, by filter, SQL, MQL and in log fields', async (t) => {
  const owner = fx.client(fx.keys.ownerA).dataClient;
  const readings = JSON.parse('{"__proto__": {"isAdmin": true}, "nested": {"__proto__": [1]}, "v": 7}') as Record<string, unknown>;
  await owner.tabularDataCaptureUpload([{ readings }], fx.machineA1.part_id, 'rdk:component:sensor', 'proto', 'Readings', [when()]);
  const expected = '{"readings":{"__proto__":{"isAdmin":true},"nested":{"__proto__":[1]},"v":7}}';
  const [byFilter] = (await owner.tabularDataByFilter({ componentName: 'proto' })).data;
  t.is(JSON.stringify(byFilter.data), expected, 'TabularDataByFilter');
  t.is(Object.getPrototypeOf(byFilter.data.readings), Object.prototype);
  t.is((byFilter.data.readings as { isAdmin?: unknown }).isAdmin, undefined, 'nothing is inherited from the data');
  const [bySql] = await owner.tabularDataBySQL(fx.orgA, "SELECT data FROM readings WHERE component_name = 'proto'");
  t.is(JSON.stringify(bySql.data), expected, 'TabularDataBySQL');
  const [byMql] = await owner.tabularDataByMQL(fx.orgA, [{ $match: { component_name: 'proto' } }, { $project: { _id: 0, data: 1 } }]);
  t.is(JSON.stringify(byMql.data), expected, 'TabularDataByMQL');

  const part = await partClients(fx.cloud.address, { partId: fx.machineA1.part_id, secret: fx.machineA1.part_secret });
  t.teardown(() => part.close());
  const fields = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as Record<string, unknown>;
  await call(
    part.robot.log.bind(part.robot),
    { id: fx.machineA1.part_id, logs: [{ time: new Date(), level: 'info', loggerName: 'p', message: 'proto fields', fields }] },
    part.md,
  );
  const page = await call(
    reader.app.getRobotPartLogs.bind(reader.app),
    { id: fx.machineA1.part_id, levels: [], filter: 'proto fields', pageToken: '', limit: 10 },
    reader.md,
  );
  t.is(JSON.stringify(page.logs[0]?.fields), '{"__proto__":{"x":1},"y":2}', 'log fields');
  t.is(({} as { isAdmin?: unknown }).isAdmin, undefined, 'Object.prototype is untouched here');
  await stillAnswers(t, '__proto__');
});

test.serial("a malformed percent-encoding on the cloud's web port is 400, for the page and for thumbnails", async (t) => {
  for (const path of ['/%zz', '/%E9.js', '/thumbnails/%zz', '/thumbnails/%E9']) {
    const res = await fetch(new URL(path, fx.cloud.webUrl));
    t.is(res.status, 400, path);
    t.regex(await res.text(), /malformed percent-encoding in the URL path/, path);
  }
  await stillAnswers(t, 'percent-encoding');
});
