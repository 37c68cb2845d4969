// Tabular ingest (insertTabular) on both stores: the DuckDB Store's appender and insert lanes, and
// PostgreSQL's one INSERT per upload (pg-tabular-ingest.ts). The same uploads give the same rows.
import test from 'ava';
import type { PartInfo } from '../data/parts.js';
import { readingsPartitionName } from '../store/pg-readings.js';
import { PgStore } from '../store/pg-store.js';
import { internalTag } from '../store/schema.js';
import { Store } from '../store/store.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { insertTabular, type TabularPoint } from './tabular-ingest.js';

const part: PartInfo = { kind: 'part', partId: 'p1', partName: 'p1-main', machineId: 'm1', robotName: 'm', locationId: 'l1', organizationId: 'o1' };
const base = Date.parse('2026-03-01T00:00:00Z');

const pointsOf = (upload: number, n: number): TabularPoint[] =>
  Array.from({ length: n }, (_, i) => ({
    timeRequested: new Date(base + upload * 100_000 + i),
    timeReceived: new Date(base + upload * 100_000 + i + 1),
    data: { readings: { upload, i, text: 'é "q" \\ {x}' } },
  }));

const capture = (name: string, tags: string[] = [], methodParameters?: Record<string, unknown>) => ({
  part,
  componentType: 'rdk:component:sensor',
  componentName: name,
  methodName: 'Readings',
  methodParameters,
  tags,
});

const ingestStore = (store: unknown) => {
  if (store instanceof Store || store instanceof PgStore) return store;
  throw new Error('not a store insertTabular takes');
};

for (const backend of tabularBackends(test)) {
  test(`${backend.name}: concurrent uploads each keep their own metadata, points (in order) and one seq range`, async (t) => {
    const store = await backend.open(t);
    const sizes = [1, 3000, 5, 2048, 700, 1, 4097, 12];
    const ids = await Promise.all(
      sizes.map((n, u) => insertTabular(ingestStore(store), capture(`c${u}`, [`t${u}`, 'shared'], u % 2 ? { u } : undefined), pointsOf(u, n))),
    );
    t.is(new Set(ids).size, sizes.length);
    const rows = await store.query(
      `SELECT seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id, part_name, component_type, component_name,
         method_name, method_parameters, tags, time_requested, time_received, time_synced, data, internal, size_bytes
       FROM tabular_data ORDER BY seq`,
    );
    t.is(
      rows.length,
      sizes.reduce((a, b) => a + b, 0),
    );
    t.is(new Set(rows.map((r) => r.seq)).size, rows.length, 'every seq once');
    for (const [u, n] of sizes.entries()) {
      const mine = rows.filter((r) => r.component_name === `c${u}`);
      t.is(mine.length, n);
      t.is(Number(mine[n - 1].seq as bigint) - Number(mine[0].seq as bigint) + 1, n, 'one upload has one contiguous seq range');
      t.deepEqual(
        mine.map((r) => JSON.parse(String(r.data)).readings.i),
        Array.from({ length: n }, (_, i) => i),
        'seq follows the points',
      );
      const first = mine[0];
      t.like(first, {
        upload_id: ids[u],
        organization_id: 'o1',
        location_id: 'l1',
        robot_id: 'm1',
        robot_name: 'm',
        part_id: 'p1',
        part_name: 'p1-main',
        component_type: 'rdk:component:sensor',
        method_name: 'Readings',
        method_parameters: u % 2 ? JSON.stringify({ u }) : null,
        internal: false,
      });
      t.deepEqual(first.tags, [`t${u}`, 'shared']);
      t.deepEqual(first.time_requested, new Date(base + u * 100_000));
      t.deepEqual(first.time_received, new Date(base + u * 100_000 + 1));
      t.true(first.time_synced instanceof Date);
      t.deepEqual(JSON.parse(String(first.data)), { readings: { upload: u, i: 0, text: 'é "q" \\ {x}' } });
      t.is(first.size_bytes, Buffer.byteLength(String(first.data)));
    }
  });

  test(`${backend.name}: an upload that fails fails alone and writes nothing; internal data is marked`, async (t) => {
    const store = await backend.open(t);
    const bad = pointsOf(9, 3);
    bad[1].json = '{"readings": not json';
    const results = await Promise.allSettled([
      insertTabular(ingestStore(store), capture('a'), pointsOf(1, 10)),
      insertTabular(ingestStore(store), capture('bad'), bad),
      insertTabular(ingestStore(store), capture('b', [internalTag]), pointsOf(2, 20)),
    ]);
    t.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    const rows = await store.query('SELECT component_name, internal, count(*) AS n FROM tabular_data GROUP BY component_name, internal ORDER BY 1');
    t.deepEqual(
      rows.map((r) => [r.component_name, r.internal, Number(r.n)]),
      [
        ['a', false, 10],
        ['b', true, 20],
      ],
    );
    if (store.dialect === 'postgres') {
      const rows = await store.query('SELECT tableoid::regclass::text AS p, time_synced FROM tabular_data');
      t.true(
        rows.every((r) => r.p === readingsPartitionName(r.time_synced as Date)),
        "rows land in their day's partition, made by the first upload of the day",
      );
    }
  });
}

// pg-tabular-ingest.ts sends times as epoch milliseconds and turns them back in SQL: every time comes
// back exactly, before 1970 (negative milliseconds), within a millisecond of a day's edge, and past
// 2255 (where a product of all the microseconds in one float8 would round).
const edgeTimes = [
  '1969-12-31T23:59:59.999Z',
  '1900-01-01T00:00:00.001Z',
  '1970-01-01T00:00:00.000Z',
  '2026-03-29T01:00:00.000Z',
  '2026-11-27T23:59:59.999Z',
  '2500-06-30T12:34:56.789Z',
  '9999-12-31T23:59:59.999Z',
].map((iso) => new Date(iso));

for (const backend of tabularBackends(test)) {
  test(`${backend.name}: times come back exactly, to the millisecond, before 1970 and far ahead`, async (t) => {
    const store = await backend.open(t);
    const points = edgeTimes.map((time, i) => ({ timeRequested: time, timeReceived: new Date(time.getTime() + i), data: { readings: { i } } }));
    await insertTabular(ingestStore(store), capture('times'), points);
    const rows = await store.query('SELECT time_requested, time_received, data FROM tabular_data ORDER BY seq');
    t.deepEqual(
      rows.map((r) => [(r.time_requested as Date).toISOString(), (r.time_received as Date).toISOString(), JSON.parse(String(r.data)).readings.i]),
      points.map((p, i) => [p.timeRequested.toISOString(), p.timeReceived.toISOString(), i]),
    );
  });

  test(`${backend.name}: a point whose JSON is two values is refused with its upload, which writes nothing`, async (t) => {
    const store = await backend.open(t);
    const points = pointsOf(3, 4);
    points[2].json = '{"readings":{"a":1}},{"readings":{"b":2}}';
    await t.throwsAsync(insertTabular(ingestStore(store), capture('two'), points));
    t.deepEqual(await store.query("SELECT count(*) AS n FROM tabular_data WHERE component_name = 'two'").then((r) => Number(r[0].n)), 0);
  });
}
