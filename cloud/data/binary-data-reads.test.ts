// BinaryDataStore reads on both TabularStore backends (issue 33): every filter field, the caller's
// scope, pages in each order with their cursors, counts and content. Changes (tags, boxes, deletes)
// are in binary-data-edits.test.ts; the gRPC service around them in binary-data-api.test.ts.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { Order, TagsFilterType, type Filter } from '../../gen/platform/app/data/v1/data.js';
import type { KeyPrincipal } from '../auth/principal.js';
import { internalTag } from '../store/schema.js';
import { binaryFixture, emptyFilter, type BinaryFixture } from '../testing/binary-fixture.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { rejectionCodeOf } from '../testing/tenancy-fixture.js';
import { encodeCursor } from './cursor.js';
import { datasetTag } from './dataset-tag.js';
import { pageOf } from './rows.js';

const backends = tabularBackends(test);

const at = (s: string) => new Date(`2026-11-27T00:00:${s}Z`);

/** Rows every filter field has something to match and something to miss in. */
async function filterRows(fx: BinaryFixture) {
  await fx.dataset('ds1');
  await fx.insert([
    { id: 'j1', time: '2026-11-27T00:00:01.000001Z', seq: 1, tags: ['a'], content: 'j1' },
    { id: 'p2', time: '2026-11-27T00:00:02.000002Z', seq: 2, componentType: 'camera', mime: 'image/png', tags: ['b', 'c'] },
    {
      id: 'l3',
      time: '2026-11-27T00:00:03.000003Z',
      seq: 3,
      machine: 'arm',
      componentType: 'sensor',
      componentName: 'lidar',
      method: 'NextPointCloud',
      mime: 'pointcloud/pcd',
    },
    { id: 'i4', time: '2026-11-27T00:00:04Z', seq: 4, tags: [internalTag, 'a'], internal: true },
    { id: 'd5', time: '2026-11-27T00:00:05Z', seq: 5, method: 'Other', tags: [datasetTag('ds1')], datasets: ['ds1'] },
    { id: 'i6', time: '2026-11-27T00:00:06Z', seq: 6, tags: [internalTag], internal: true },
    { id: 'b7', time: '2026-11-27T00:00:01.000001Z', seq: 7, org: 'B', tags: ['a'] },
  ]);
  await fx.binary.addBoundingBox(fx.keys.ownerA, 'j1', { label: 'dog', xMinNormalized: 0, yMinNormalized: 0, xMaxNormalized: 1, yMaxNormalized: 1 });
  await fx.binary.addBoundingBox(fx.keys.ownerA, 'p2', { label: 'cat', xMinNormalized: 0, yMinNormalized: 0, xMaxNormalized: 1, yMaxNormalized: 1 });
  await fx.binary.addBoundingBox(fx.keys.ownerB, 'b7', { label: 'dog', xMinNormalized: 0, yMinNormalized: 0, xMaxNormalized: 1, yMaxNormalized: 1 });
}

/** The ids a filter selects, in capture-time order (ascending). */
async function ids(
  fx: BinaryFixture,
  fields: Partial<Filter> | undefined,
  principal: KeyPrincipal = fx.keys.ownerA,
  includeInternal = false,
): Promise<string[]> {
  const page = pageOf({ limit: 100, last: '', sortOrder: Order.ORDER_ASCENDING });
  const filter = fields === undefined ? undefined : emptyFilter(fields);
  const { data } = await fx.binary.byFilter(principal, filter, page, { includeBinary: false, countOnly: false, includeInternal });
  return data.map((d) => d.metadata?.binaryDataId ?? '');
}

for (const backend of backends) {
  test(`${backend.name}: each filter field selects its rows, inside the caller's organization and scope`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await filterRows(fx);
    const { rover, arm } = fx.machines;
    t.deepEqual(await ids(fx, undefined), ['j1', 'p2', 'l3', 'd5'], 'no filter: the organization, without internal data');
    t.deepEqual(await ids(fx, {}, fx.keys.ownerA, true), ['j1', 'p2', 'l3', 'i4', 'd5', 'i6'], 'include internal');
    t.deepEqual(await ids(fx, { componentName: 'lidar' }), ['l3']);
    t.deepEqual(await ids(fx, { method: 'Other' }), ['d5']);
    t.deepEqual(await ids(fx, { robotName: 'arm' }), ['l3']);
    t.deepEqual(await ids(fx, { robotId: arm.machine_id }), ['l3']);
    t.deepEqual(await ids(fx, { partName: 'arm-main' }), ['l3']);
    t.deepEqual(await ids(fx, { partId: rover.part_id }), ['j1', 'p2', 'd5']);
    // The short and the API form each match rows stored in either form; LIKE's _ is escaped.
    t.deepEqual(await ids(fx, { componentType: 'camera' }), ['j1', 'p2', 'd5']);
    t.deepEqual(await ids(fx, { componentType: 'rdk:component:camera' }), ['j1', 'p2', 'd5']);
    t.deepEqual(await ids(fx, { componentType: 'cam_ra' }), []);
    t.deepEqual(await ids(fx, { componentType: 'sensor' }), ['l3']);
    t.deepEqual(await ids(fx, { locationIds: [fx.field] }), ['l3']);
    t.deepEqual(await ids(fx, { locationIds: [fx.field, rover.location_id] }), ['j1', 'p2', 'l3', 'd5']);
    // The interval: start inclusive, end exclusive.
    t.deepEqual(await ids(fx, { interval: { start: at('02') } }), ['p2', 'l3', 'd5']);
    t.deepEqual(await ids(fx, { interval: { start: at('05') } }), ['d5']);
    t.deepEqual(await ids(fx, { interval: { end: at('05') } }), ['j1', 'p2', 'l3']);
    t.deepEqual(await ids(fx, { interval: { start: at('02'), end: at('03') } }), ['p2']);
    t.is(await rejectionCodeOf(ids(fx, { interval: { start: at('03'), end: at('02') } })), status.INVALID_ARGUMENT);
    // The ends of a Date's range, past PostgreSQL's TIMESTAMPTZ at the start: every row, or none.
    const [first, last] = [new Date(-8.64e15), new Date(8.64e15)];
    t.deepEqual(await ids(fx, { interval: { start: first, end: last } }), ['j1', 'p2', 'l3', 'd5']);
    t.deepEqual(await ids(fx, { interval: { end: first } }), []);
    t.deepEqual(await ids(fx, { interval: { start: last } }), []);
    const tags = (type: TagsFilterType, list: string[] = []) => ({ tagsFilter: { type, tags: list } });
    t.deepEqual(await ids(fx, tags(TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR, ['b', 'a'])), ['j1', 'p2']);
    t.deepEqual(await ids(fx, tags(TagsFilterType.TAGS_FILTER_TYPE_UNSPECIFIED, ['zzz'])), []);
    t.is(await rejectionCodeOf(ids(fx, tags(TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR))), status.INVALID_ARGUMENT);
    // The internal marker is not a user tag: i6 (only the marker) is untagged, i4 (a marker and 'a') tagged.
    t.deepEqual(await ids(fx, tags(TagsFilterType.TAGS_FILTER_TYPE_TAGGED)), ['j1', 'p2', 'd5']);
    t.deepEqual(await ids(fx, tags(TagsFilterType.TAGS_FILTER_TYPE_TAGGED), fx.keys.ownerA, true), ['j1', 'p2', 'i4', 'd5']);
    t.deepEqual(await ids(fx, tags(TagsFilterType.TAGS_FILTER_TYPE_UNTAGGED)), ['l3']);
    t.deepEqual(await ids(fx, tags(TagsFilterType.TAGS_FILTER_TYPE_UNTAGGED), fx.keys.ownerA, true), ['l3', 'i6']);
    t.deepEqual(await ids(fx, { mimeType: ['image/png', 'pointcloud/pcd'] }), ['p2', 'l3']);
    t.deepEqual(await ids(fx, { bboxLabels: ['dog'] }), ['j1'], "org B's dog box does not bring its datum in");
    t.deepEqual(await ids(fx, { bboxLabels: ['dog', 'cat'] }), ['j1', 'p2']);
    t.deepEqual(await ids(fx, { datasetId: 'ds1' }), ['d5']);
    t.deepEqual(await ids(fx, { componentName: 'cam', mimeType: ['image/png'] }), ['p2'], 'fields combine with AND');
    t.deepEqual(await ids(fx, { organizationIds: [fx.orgA] }), ['j1', 'p2', 'l3', 'd5']);
    // Another organization's data: refused when named, never returned when not.
    t.is(await rejectionCodeOf(ids(fx, { organizationIds: [fx.orgB] })), status.PERMISSION_DENIED);
    t.is(await rejectionCodeOf(ids(fx, { organizationIds: [fx.orgB] }, fx.keys.ownerField)), status.PERMISSION_DENIED);
    t.deepEqual(await ids(fx, undefined, fx.keys.ownerB), ['b7']);
    t.deepEqual(await ids(fx, { robotId: arm.machine_id }, fx.keys.ownerB), []);
    t.deepEqual(await ids(fx, undefined, fx.keys.ownerField), ['l3'], 'a location key sees its location only');
    t.deepEqual(await ids(fx, { partId: rover.part_id }, fx.keys.ownerField), []);
  });

  test(`${backend.name}: counts, sizes, content and boxes by filter and by ids; ids of another organization are refused`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    await filterRows(fx);
    const page = pageOf({ limit: 0, last: '', sortOrder: Order.ORDER_UNSPECIFIED });
    const count = await fx.binary.byFilter(fx.keys.ownerA, emptyFilter({ mimeType: ['image/jpeg'] }), page, {
      includeBinary: false,
      countOnly: true,
      includeInternal: true,
    });
    t.like(count, { count: 4, totalSizeBytes: 2, data: [], last: '' });
    const withContent = await fx.binary.byFilter(fx.keys.ownerA, emptyFilter({ componentName: 'cam' }), page, {
      includeBinary: true,
      countOnly: false,
      includeInternal: false,
    });
    t.deepEqual(
      withContent.data.map((d) => [d.metadata?.binaryDataId, Buffer.from(d.binary).toString(), d.metadata?.annotations?.bboxes.map((b) => b.label)]),
      [
        ['d5', '', []],
        ['p2', '', ['cat']],
        ['j1', 'j1', ['dog']],
      ],
    );
    t.deepEqual(withContent.data[0].metadata?.datasetIds, ['ds1']);
    t.is(withContent.data[2].metadata?.timeRequested?.toISOString(), '2026-11-27T00:00:01.000Z');
    const byIds = await fx.binary.byIds(fx.keys.ownerA, ['l3', 'j1'], true);
    t.deepEqual(
      byIds.map((d) => [d.metadata?.binaryDataId, Buffer.from(d.binary).toString(), d.metadata?.captureMetadata?.componentName]),
      [
        ['l3', '', 'lidar'],
        ['j1', 'j1', 'cam'],
      ],
      'in the order asked',
    );
    t.is(await rejectionCodeOf(fx.binary.byIds(fx.keys.ownerA, ['j1', 'nope'], false)), status.NOT_FOUND);
    t.is(await rejectionCodeOf(fx.binary.byIds(fx.keys.ownerA, ['j1', 'b7'], false)), status.PERMISSION_DENIED);
    t.is(await rejectionCodeOf(fx.binary.byIds(fx.keys.ownerB, ['j1'], false)), status.PERMISSION_DENIED);
    t.is(await rejectionCodeOf(fx.binary.byIds(fx.keys.ownerField, ['j1'], false)), status.PERMISSION_DENIED);
    t.deepEqual(
      (await fx.binary.byIds(fx.keys.ownerField, ['l3'], false)).map((d) => d.metadata?.binaryDataId ?? ''),
      ['l3'],
    );
  });

  test(`${backend.name}: pages follow (capture time, seq) in each order, and cursors between rows a microsecond apart lose and repeat nothing`, async (t) => {
    const store = await backend.open(t);
    const fx = await binaryFixture(store);
    // All in one millisecond: a cursor rounded to milliseconds would skip or repeat rows.
    const us = (n: number) => `2026-11-27T00:00:00.00${n}Z`;
    await fx.insert([
      { id: 's1', time: us(1), seq: 1 },
      { id: 's2', time: us(1), seq: 2 },
      { id: 's3', time: us(2), seq: 3 },
      { id: 's4', time: us(2), seq: 4 },
      { id: 's5', time: us(3), seq: 5 },
      { id: 's6', time: us(0), seq: 6 },
      { id: 's7', time: us(3), seq: 7 },
      { id: 'sb', time: us(2), seq: 8, org: 'B' },
    ]);
    const walk = async (sortOrder: Order, limit: number) => {
      const pages: string[][] = [];
      let last = '';
      for (;;) {
        const res = await fx.binary.byFilter(fx.keys.ownerA, undefined, pageOf({ limit, last, sortOrder }), {
          includeBinary: false,
          countOnly: false,
          includeInternal: false,
        });
        if (res.data.length === 0) {
          t.is(res.last, '', 'an empty page has no cursor');
          return pages;
        }
        pages.push(res.data.map((d) => d.metadata?.binaryDataId ?? ''));
        last = res.last;
      }
    };
    const ascending = ['s6', 's1', 's2', 's3', 's4', 's5', 's7'];
    t.deepEqual(await walk(Order.ORDER_ASCENDING, 2), [['s6', 's1'], ['s2', 's3'], ['s4', 's5'], ['s7']]);
    t.deepEqual(await walk(Order.ORDER_DESCENDING, 2), [['s7', 's5'], ['s4', 's3'], ['s2', 's1'], ['s6']]);
    t.deepEqual((await walk(Order.ORDER_UNSPECIFIED, 3)).flat(), [...ascending].reverse(), 'unspecified is newest first');
    t.deepEqual((await walk(Order.ORDER_ASCENDING, 1)).flat(), ascending);
    t.deepEqual(await walk(Order.ORDER_ASCENDING, 100), [ascending]);
    // Cursors at the ends of the range a cursor may name (DuckDB's, wider than PostgreSQL's): every
    // row is after the earliest and before the latest, on both backends.
    const page = async (sortOrder: Order, timeMicros: bigint) => {
      const last = encodeCursor({ timeMicros, seq: 1n });
      const res = await fx.binary.byFilter(fx.keys.ownerA, undefined, pageOf({ limit: 100, last, sortOrder }), {
        includeBinary: false,
        countOnly: false,
        includeInternal: false,
      });
      return res.data.length;
    };
    const [earliest, latest] = [-(2n ** 63n - 1n), 2n ** 63n - 2n];
    t.is(await page(Order.ORDER_ASCENDING, earliest), 7);
    t.is(await page(Order.ORDER_DESCENDING, earliest), 0);
    t.is(await page(Order.ORDER_DESCENDING, latest), 7);
    t.is(await page(Order.ORDER_ASCENDING, latest), 0);
  });
}
