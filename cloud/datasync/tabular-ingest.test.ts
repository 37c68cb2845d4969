// Group commit: uploads that wait for the writer together are written together, each with its own
// constant columns and seq range, and one that fails does not take the others down with it.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PartInfo } from '../data/parts.js';
import { Store } from '../store/store.js';
import { insertTabular, type TabularPoint } from './tabular-ingest.js';

const part: PartInfo = { kind: 'part', partId: 'p1', partName: 'p1-main', machineId: 'm1', robotName: 'm', locationId: 'l1', organizationId: 'o1' };
const base = Date.parse('2026-03-01T00:00:00Z');

const pointsOf = (upload: number, n: number): TabularPoint[] =>
  Array.from({ length: n }, (_, i) => ({
    timeRequested: new Date(base + upload * 100_000 + i),
    timeReceived: new Date(base + upload * 100_000 + i + 1),
    data: { readings: { upload, i, text: 'é' } },
  }));

async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tabular-ingest-'));
  const store = await Store.open(dir);
  try {
    await fn(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('concurrent uploads each keep their own metadata, points and seq range', async (t) => {
  await withStore(async (store) => {
    const sizes = [1, 3000, 5, 2048, 700, 1, 4097, 12];
    const ids = await Promise.all(
      sizes.map((n, u) =>
        insertTabular(
          store,
          {
            part,
            componentType: 'rdk:component:sensor',
            componentName: `c${u}`,
            methodName: 'Readings',
            methodParameters: u % 2 ? { u } : undefined,
            tags: [`t${u}`, 'shared'],
          },
          pointsOf(u, n),
        ),
      ),
    );
    t.is(new Set(ids).size, sizes.length);
    const rows = await store.query(
      `SELECT upload_id, component_name, method_parameters, tags, count(*) AS n, min(seq) AS lo, max(seq) AS hi, count(DISTINCT seq) AS distinct_seq,
         bool_and(size_bytes = strlen(data)) AS sizes_ok, bool_and(time_received > time_requested) AS times_ok,
         bool_and(organization_id = 'o1' AND location_id = 'l1' AND robot_id = 'm1' AND robot_name = 'm' AND part_id = 'p1' AND part_name = 'p1-main') AS part_ok,
         bool_and(NOT internal) AS public, bool_and(time_synced IS NOT NULL) AS synced
       FROM tabular_data GROUP BY ALL ORDER BY component_name`,
    );
    t.is(rows.length, sizes.length);
    for (const row of rows) {
      const u = Number(String(row.component_name).slice(1));
      t.is(row.upload_id, ids[u]);
      t.is(Number(row.n), sizes[u]);
      t.is(Number(row.distinct_seq), sizes[u]);
      t.is(Number(row.hi) - Number(row.lo) + 1, sizes[u], 'one upload has one contiguous seq range');
      t.deepEqual(row.tags, [`t${u}`, 'shared']);
      t.is(row.method_parameters, u % 2 ? JSON.stringify({ u }) : null);
      t.true(row.sizes_ok && row.times_ok && row.part_ok && row.public && row.synced);
    }
    const sample = await store.query(`SELECT data FROM tabular_data WHERE component_name = 'c1' ORDER BY seq LIMIT 2 OFFSET 2047`);
    t.deepEqual(
      sample.map((r) => JSON.parse(String(r.data))),
      [{ readings: { upload: 1, i: 2047, text: 'é' } }, { readings: { upload: 1, i: 2048, text: 'é' } }],
    );
    // Rows keep their capture order inside the table (page queries rely on row-group time ranges).
    const order = await store.query(
      `SELECT bool_and(ordered) AS ok FROM (SELECT time_requested >= lag(time_requested) OVER (ORDER BY rowid) OR upload_id <> lag(upload_id) OVER (ORDER BY rowid) AS ordered FROM tabular_data)`,
    );
    t.not(order[0].ok, false);
  });
});

test('an upload that fails inside a group fails alone', async (t) => {
  await withStore(async (store) => {
    const capture = (name: string) => ({ part, componentType: 'rdk:component:sensor', componentName: name, methodName: 'Readings', tags: [] });
    const bad = pointsOf(9, 3);
    bad[1].json = '{"readings": not json'; // DuckDB refuses it when the row reaches the JSON column
    const results = await Promise.allSettled([
      insertTabular(store, capture('a'), pointsOf(1, 10)),
      insertTabular(store, capture('bad'), bad),
      insertTabular(store, capture('b'), pointsOf(2, 20)),
    ]);
    t.is(results[0].status, 'fulfilled');
    t.is(results[1].status, 'rejected');
    t.is(results[2].status, 'fulfilled');
    const rows = await store.query('SELECT component_name, count(*) AS n FROM tabular_data GROUP BY ALL ORDER BY 1');
    t.deepEqual(
      rows.map((r) => [r.component_name, Number(r.n)]),
      [
        ['a', 10],
        ['b', 20],
      ],
    );
    // The writer goes on afterwards.
    await insertTabular(store, capture('c'), pointsOf(3, 4));
    t.is(Number((await store.query(`SELECT count(*) AS n FROM tabular_data WHERE component_name = 'c'`))[0].n), 4);
  });
});

test('staging tables are replaced along the way without losing or repeating rows', async (t) => {
  await withStore(async (store) => {
    const capture = { part, componentType: 'rdk:component:sensor', componentName: 'bulk', methodName: 'Readings', tags: [] };
    // 130 000 points: each of the two insert lanes stages more than the 50 000 rows it keeps.
    for (let round = 0; round < 13; round += 2) {
      await Promise.all([round, round + 1].filter((u) => u < 13).map((u) => insertTabular(store, capture, pointsOf(u, 10_000))));
    }
    const [row] = await store.query('SELECT count(*) AS n, count(DISTINCT seq) AS s, count(DISTINCT upload_id) AS u FROM tabular_data');
    t.deepEqual([Number(row.n), Number(row.s), Number(row.u)], [130_000, 130_000, 13]);
  });
});
