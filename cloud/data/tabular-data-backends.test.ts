// Tabular data reads and deletes (tabular-data.ts) on both TabularStore backends (issue 33): every
// filter field and the caller's scope, both orders with their cursors (rows a microsecond apart and
// rows of one time), counts, the latest reading, export and delete. (DuckDB's time-window page reader
// is held to plain top-N pages in page-query.test.ts.)
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { Order, TagsFilterType, type Filter, type TabularDataByFilterRequest } from '../../gen/platform/app/data/v1/data.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { internalTag } from '../store/schema.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { binaryFixture, emptyFilter } from '../testing/binary-fixture.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf } from '../testing/tenancy-fixture.js';
import { deleteTabularData, exportTabularData, getLatestTabularData, tabularDataByFilter } from './tabular-data.js';

const backends = tabularBackends(test);

interface Point {
  id: string;
  org?: 'A' | 'B';
  machine?: 'rover' | 'arm' | 'other';
  componentType?: string;
  componentName?: string;
  method?: string;
  tags?: string[];
  internal?: boolean;
  /** time_requested as text with microseconds. */
  time: string;
  seq: number;
  synced?: Date;
  size?: number;
}

async function fixture(store: StoreWithBlobs) {
  const fx = await binaryFixture(store);
  const insert = async (points: Point[]) => {
    for (const p of points) {
      const org = p.org === 'B' ? fx.orgB : fx.orgA;
      const name = p.machine ?? (p.org === 'B' ? 'other' : 'rover');
      const m = fx.machines[name];
      await store.execute(
        `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id, part_name,
           component_type, component_name, method_name, method_parameters, tags, time_requested, time_received, time_synced, data,
           internal, size_bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS VARCHAR[]), CAST(? AS TIMESTAMPTZ), ?, ?, ?, ?, ?)`,
        [
          p.seq,
          `upload-${p.id}`,
          org,
          m.location_id,
          m.machine_id,
          name,
          m.part_id,
          `${name}-main`,
          p.componentType ?? 'rdk:component:sensor',
          p.componentName ?? 'thermo',
          p.method ?? 'Readings',
          '{"unit":"C"}',
          p.tags ?? [],
          p.time,
          new Date('2026-11-27T12:00:00Z'),
          p.synced ?? new Date(),
          JSON.stringify({ readings: { id: p.id } }),
          p.internal ?? false,
          p.size ?? 10,
        ],
      );
    }
  };
  return { ...fx, insert };
}

const points: Point[] = [
  { id: 'a1', time: '2026-11-27T00:00:01.000001Z', seq: 1, tags: ['x'] },
  { id: 'a2', time: '2026-11-27T00:00:01.000002Z', seq: 2, componentType: 'sensor', tags: ['y', 'z'] },
  { id: 'a3', time: '2026-11-27T00:00:03Z', seq: 3, machine: 'arm', componentType: 'movement_sensor', componentName: 'imu', method: 'Position' },
  { id: 'i4', time: '2026-11-27T00:00:04Z', seq: 4, tags: [internalTag, 'x'], internal: true },
  { id: 'a5', time: '2026-11-27T00:00:05Z', seq: 5, method: 'Other', tags: [internalTag] },
  { id: 't6', time: '2026-11-27T00:00:05Z', seq: 6, size: 1000 },
  { id: 'b7', time: '2026-11-27T00:00:01.000001Z', seq: 7, org: 'B', tags: ['x'] },
];

const request = (
  filter: Partial<Filter> | undefined,
  data: Partial<{ limit: number; last: string; sortOrder: Order }> = {},
  extra: Partial<TabularDataByFilterRequest> = {},
) =>
  ({
    dataRequest: { filter: filter === undefined ? undefined : emptyFilter(filter), limit: 100, last: '', sortOrder: Order.ORDER_ASCENDING, ...data },
    countOnly: false,
    includeInternalData: false,
    ...extra,
  }) as TabularDataByFilterRequest;

/** The ids of the points a filter selects, ascending. */
async function ids(store: StoreWithBlobs, principal: KeyPrincipal, filter: Partial<Filter> | undefined, extra: Partial<TabularDataByFilterRequest> = {}) {
  const res = await tabularDataByFilter(store, principal, request(filter, {}, extra));
  return res.data.map((d) => String((d.data as { readings: { id: string } }).readings.id));
}

for (const backend of backends) {
  test(`${backend.name}: each filter field selects its points, inside the caller's organization and scope`, async (t) => {
    const store = await backend.open(t);
    const fx = await fixture(store);
    await fx.insert(points);
    const owner = fx.keys.ownerA;
    const rover = fx.machines.rover;
    t.deepEqual(await ids(store, owner, undefined), ['a1', 'a2', 'a3', 'a5', 't6']);
    t.deepEqual(await ids(store, owner, undefined, { includeInternalData: true }), ['a1', 'a2', 'a3', 'i4', 'a5', 't6']);
    t.deepEqual(await ids(store, owner, { componentName: 'imu' }), ['a3']);
    // component_type in either form matches rows stored in either form.
    t.deepEqual(await ids(store, owner, { componentType: 'sensor' }), ['a1', 'a2', 'a5', 't6']);
    t.deepEqual(await ids(store, owner, { componentType: 'rdk:component:sensor' }), ['a1', 'a2', 'a5', 't6']);
    t.deepEqual(await ids(store, owner, { method: 'Other' }), ['a5']);
    t.deepEqual(await ids(store, owner, { robotName: 'arm' }), ['a3']);
    t.deepEqual(await ids(store, owner, { robotId: rover.machine_id }), ['a1', 'a2', 'a5', 't6']);
    t.deepEqual(await ids(store, owner, { partName: 'arm-main' }), ['a3']);
    t.deepEqual(await ids(store, owner, { partId: fx.machines.arm.part_id }), ['a3']);
    t.deepEqual(await ids(store, owner, { locationIds: [fx.field, 'nowhere'] }), ['a3']);
    t.deepEqual(await ids(store, owner, { organizationIds: [fx.orgA] }), ['a1', 'a2', 'a3', 'a5', 't6']);
    t.deepEqual(await ids(store, owner, { interval: { start: new Date('2026-11-27T00:00:01.001Z'), end: new Date('2026-11-27T00:00:05Z') } }), ['a3']);
    t.deepEqual(await ids(store, owner, { tagsFilter: { type: TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR, tags: ['z', 'x'] } }), ['a1', 'a2']);
    t.deepEqual(await ids(store, owner, { tagsFilter: { type: TagsFilterType.TAGS_FILTER_TYPE_TAGGED, tags: [] } }), ['a1', 'a2']);
    // The internal marker is not a user tag: a5 carries only it.
    t.deepEqual(await ids(store, owner, { tagsFilter: { type: TagsFilterType.TAGS_FILTER_TYPE_UNTAGGED, tags: [] } }), ['a3', 'a5', 't6']);
    // A location-scoped key sees its location only; another organization's key its own points.
    t.deepEqual(await ids(store, fx.keys.ownerField, undefined), ['a3']);
    t.deepEqual(await ids(store, fx.keys.ownerB, undefined), ['b7']);
    t.is(await rejectionCodeOf(ids(store, owner, { organizationIds: [fx.orgB] })), status.PERMISSION_DENIED);
    t.is(await rejectionCodeOf(ids(store, owner, { mimeType: ['image/png'] })), status.INVALID_ARGUMENT);
    t.is(await rejectionCodeOf(ids(store, owner, { datasetId: 'ds' })), status.INVALID_ARGUMENT);
  });

  test(`${backend.name}: pages walk every point once in each order, across rows a microsecond apart and of one time`, async (t) => {
    const store = await backend.open(t);
    const fx = await fixture(store);
    await fx.insert(points);
    const owner = fx.keys.ownerA;
    const walk = async (sortOrder: Order, limit: number) => {
      const seen: string[] = [];
      let last = '';
      for (let pages = 0; pages < 20; pages++) {
        const res = await tabularDataByFilter(store, owner, request({}, { limit, last, sortOrder }));
        seen.push(...res.data.map((d) => String((d.data as { readings: { id: string } }).readings.id)));
        if (res.data.length < limit) {
          t.is(res.count, res.data.length);
          return seen;
        }
        last = res.last;
      }
      throw new Error('pages did not end');
    };
    for (const limit of [1, 2, 5]) {
      t.deepEqual(await walk(Order.ORDER_ASCENDING, limit), ['a1', 'a2', 'a3', 'a5', 't6']);
      t.deepEqual(await walk(Order.ORDER_DESCENDING, limit), ['t6', 'a5', 'a3', 'a2', 'a1']);
      // Unspecified is newest first.
      t.deepEqual(await walk(Order.ORDER_UNSPECIFIED, limit), ['t6', 'a5', 'a3', 'a2', 'a1']);
    }
    // A page's metadata is listed once per distinct capture and its data points at it.
    const page = await tabularDataByFilter(store, owner, request({}, { limit: 3 }));
    // a1 and a2 differ in component type and tags: three captures.
    t.deepEqual(
      page.data.map((d) => d.metadataIndex),
      [0, 1, 2],
    );
    t.deepEqual(
      page.metadata.map((m) => m.componentName),
      ['thermo', 'thermo', 'imu'],
    );
    await fx.insert([
      { id: 's8', componentName: 'same', time: '2026-11-27T00:00:06Z', seq: 8 },
      { id: 's9', componentName: 'same', time: '2026-11-27T00:00:07Z', seq: 9 },
    ]);
    const twice = await tabularDataByFilter(store, owner, request({ componentName: 'same' }));
    t.deepEqual(
      twice.data.map((d) => d.metadataIndex),
      [0, 0],
      'points of one capture share its metadata',
    );
    t.deepEqual(page.metadata[0].methodParameters, { unit: 'C' });
    t.deepEqual(page.metadata[0].tags, ['x']);
    t.is(page.data[1].timeRequested?.toISOString(), '2026-11-27T00:00:01.000Z');
    t.is(page.totalSizeBytes, 30);
    t.is(await rejectionCodeOf(tabularDataByFilter(store, owner, request({}, { last: 'forged' }))), status.INVALID_ARGUMENT);
  });

  test(`${backend.name}: count_only counts the matching points and their bytes`, async (t) => {
    const store = await backend.open(t);
    const fx = await fixture(store);
    await fx.insert(points);
    const all = await tabularDataByFilter(store, fx.keys.ownerA, request({}, {}, { countOnly: true }));
    t.like(all, { count: 5, totalSizeBytes: 1040, data: [], last: '' });
    const withInternal = await tabularDataByFilter(store, fx.keys.ownerA, request(undefined, {}, { countOnly: true, includeInternalData: true }));
    t.like(withInternal, { count: 6, totalSizeBytes: 1050 });
    t.like(await tabularDataByFilter(store, fx.keys.ownerA, request({ method: 'nothing' }, {}, { countOnly: true })), { count: 0, totalSizeBytes: 0 });
  });

  test(`${backend.name}: the latest point of a source, synced within a year; export in capture order; delete by age`, async (t) => {
    const store = await backend.open(t);
    const fx = await fixture(store);
    await fx.insert(points);
    const rover = fx.machines.rover;
    const source = { partId: rover.part_id, resourceName: 'thermo', resourceSubtype: 'rdk:component:sensor', methodName: 'Readings' };
    const latest = await getLatestTabularData(store, source);
    t.like(latest, { found: true, payload: { readings: { id: 't6' } } });
    t.is(latest.timeCaptured?.toISOString(), '2026-11-27T00:00:05.000Z');
    t.deepEqual(await getLatestTabularData(store, { ...source, methodName: 'Nothing' }), { found: false });
    await store.execute('UPDATE tabular_data SET time_synced = ? WHERE upload_id = ?', [new Date(Date.now() - 366 * 86_400_000), 'upload-t6']);
    t.like(await getLatestTabularData(store, source), { found: true, payload: { readings: { id: 'i4' } } });

    const exported: string[] = [];
    await exportTabularData(
      store,
      { ...source, interval: undefined },
      async (p) => {
        exported.push(String((p.payload as { readings: { id: string } }).readings.id));
      },
      2,
    );
    t.deepEqual(exported, ['a1', 'i4', 't6']);
    const windowed: string[] = [];
    await exportTabularData(store, { ...source, interval: { start: new Date('2026-11-27T00:00:02Z'), end: new Date('2026-11-27T00:00:05Z') } }, async (p) => {
      windowed.push(String((p.payload as { readings: { id: string } }).readings.id));
    });
    t.deepEqual(windowed, ['i4']);
    // An interval starting before PostgreSQL's first time (4713 BC; a Date reaches 271821 BC) is every point up to its end.
    const fromTheStart: string[] = [];
    await exportTabularData(store, { ...source, interval: { start: new Date(-8.64e15), end: new Date('2026-11-27T00:00:05Z') } }, async (p) => {
      fromTheStart.push(String((p.payload as { readings: { id: string } }).readings.id));
    });
    t.deepEqual(fromTheStart, ['a1', 'i4']);
    t.is(await rejectionCodeOf(exportTabularData(store, { ...source, resourceName: '', interval: undefined }, async () => {})), status.INVALID_ARGUMENT);

    // Delete: only points captured before the age, only the caller's organization's.
    await fx.insert([{ id: 'old', time: new Date(Date.now() - 10 * 86_400_000).toISOString(), seq: 8 }]);
    const recent = new Date(Date.now() - 86_400_000).toISOString();
    await fx.insert([{ id: 'new', time: recent, seq: 9 }]);
    t.is(await deleteTabularData(store, fx.keys.ownerA, 5), 1);
    t.deepEqual(await ids(store, fx.keys.ownerA, undefined, { includeInternalData: true }), ['new', 'a1', 'a2', 'a3', 'i4', 'a5', 't6']);
    t.is(await deleteTabularData(store, fx.keys.ownerA, 0), 7);
    t.deepEqual(await ids(store, fx.keys.ownerA, undefined, { includeInternalData: true }), []);
    t.deepEqual(await ids(store, fx.keys.ownerB, undefined), ['b7']);
    t.is(await rejectionCodeOf(deleteTabularData(store, fx.keys.ownerA, -1)), status.INVALID_ARGUMENT);
  });
}
