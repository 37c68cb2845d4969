// Issue 33's differential test: the same uploads, stored once in the embedded DuckDB Store and once in
// PostgreSQL, give the same SQL and MQL results (rows, values and their types) through the embedded
// engine and through the scale-out one, with some days sealed into Parquet segments in the blob store
// and today's rows an unsealed tail. And the scale-out engine's DuckDB holds the caller's organization
// only: another organization's rows never appear, not even in files it could name.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertTabular } from '../../datasync/tabular-ingest.js';
import { PgStore } from '../../store/pg-store.js';
import { Store } from '../../store/store.js';
import type { StoreWithBlobs } from '../../store/tabular.js';
import { tabularBackends } from '../../testing/tabular-backends.js';
import { MingoPool } from '../mql/mingo-pool.js';
import { MqlRunner } from '../mql/mql-runner.js';
import { SqlSandbox } from '../sql/sql-sandbox.js';
import { startScaleOutQuery, type ScaleOutQuery } from './scale-out-query.js';
import { DAY, storeSameUploads, today, upload } from './differential-fixture.js';

const [duckBackend, pgBackend] = tabularBackends(test);

let duck: Store;
let pg: PgStore & StoreWithBlobs;
let scaleOut: ScaleOutQuery;
let pool: MingoPool;
let workDir: string;
const engines: { name: string; sql: SqlSandbox; mql: MqlRunner }[] = [];

test.before(async () => {
  duck = (await duckBackend.openForFile()) as Store;
  pg = (await pgBackend.openForFile()) as PgStore & StoreWithBlobs;
  await storeSameUploads(duck, pg);
  workDir = mkdtempSync(join(tmpdir(), 'scale-out-diff-'));
  scaleOut = startScaleOutQuery(pg, { dataDir: workDir, seal: false, sealGraceMs: 0 });
  pool = new MingoPool({ processes: 1 });
  const limits = { timeoutMs: 120_000 };
  engines.push({
    name: 'embedded',
    sql: new SqlSandbox(() => duck.instance.connect(), limits),
    mql: new MqlRunner(
      () => duck.instance.connect(),
      pool,
      async () => [],
      { limits },
    ),
  });
  engines.push({
    name: 'scale-out',
    sql: new SqlSandbox(scaleOut.connect, limits),
    mql: new MqlRunner(scaleOut.connect, pool, async () => [], { limits }),
  });
});

test.after.always(async () => {
  await scaleOut?.stop();
  await pool?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

test.serial('sealing: the closed days become Parquet segments per organization, listed, their partitions dropped; today stays in PostgreSQL', async (t) => {
  const before = await pg.query('SELECT count(*) AS n FROM tabular_data');
  const sealed = await scaleOut.sealer.sealClosedDays();
  t.deepEqual(
    sealed.map((d) => (today - d.day.getTime()) / DAY),
    [4, 3, 1],
  );
  for (const day of sealed) t.deepEqual(day.segments.map((s) => s.organizationId).sort(), ['org-a', 'org-b']);
  const manifest = await pg.query(
    'SELECT organization_id, day, object_key, row_count, content_hash, bytes FROM tabular_segments ORDER BY day, organization_id',
  );
  t.is(manifest.length, 6);
  for (const m of manifest) {
    t.true(String(m.object_key).endsWith(`${String(m.content_hash)}.parquet`));
    t.is((await pg.blobs.get(String(m.object_key)))?.byteLength, Number(m.bytes));
  }
  const left = await pg.query('SELECT count(*) AS n FROM tabular_data');
  const inSegments = manifest.reduce((n, m) => n + Number(m.row_count), 0);
  t.is(Number(left[0].n) + inSegments, Number(before[0].n), 'no row lost or doubled');
  t.true(Number(left[0].n) > 0, "today's rows are still in PostgreSQL");
  const partitions = await pg.query(
    "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'tabular_data'",
  );
  t.deepEqual(
    partitions.map((r) => String(r.relname)).filter((n) => n !== 'tabular_data_default'),
    [`tabular_data_${new Date(today).toISOString().slice(0, 10).replace(/-/g, '')}`],
  );
  // A second pass finds nothing more to seal.
  t.deepEqual(await scaleOut.sealer.sealClosedDays(), []);
});

const SQL = [
  'SELECT * FROM readings ORDER BY time_received, component_name, robot_id',
  'DESCRIBE readings',
  'SHOW TABLES',
  `SELECT component_name, count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg_t, sum(data.readings.humidity::INTEGER) AS hum,
     min(time_synced) AS first_sync, max(time_requested) AS last
   FROM readings GROUP BY ALL ORDER BY ALL`,
  `SELECT robot_name, list_sort(list_distinct(flatten(list(tags)))) AS tags, count(*) FILTER (WHERE additional_parameters IS NULL) AS no_params
   FROM readings GROUP BY robot_name ORDER BY robot_name`,
  "SELECT date_trunc('day', time_synced) AS day, count(*) AS n FROM readings GROUP BY 1 ORDER BY 1",
  `SELECT data, additional_parameters, data->'$.readings'->>'note' AS note, tags FROM readings
   WHERE list_contains(tags, 'calibrated') OR data.readings.note IS NOT NULL ORDER BY time_received, robot_id`,
  'SELECT DISTINCT organization_id FROM readings',
  `WITH t AS (SELECT time_received, data.readings.temperature::DOUBLE AS v FROM readings WHERE component_name = 'thermo')
   SELECT v, v - lag(v) OVER (ORDER BY time_received, v) AS delta FROM t ORDER BY time_received, v`,
];

for (const sql of SQL) {
  test.serial(`SQL, the same rows and types in both modes: ${sql.replace(/\s+/g, ' ').slice(0, 70)}`, async (t) => {
    const [embedded, scaled] = await Promise.all(engines.map((e) => e.sql.queryTable('org-a', sql)));
    t.true(embedded.docs.length > 0);
    t.deepEqual(scaled.columns, embedded.columns);
    t.deepEqual(scaled.docs, embedded.docs);
  });
}

const MQL: Record<string, unknown>[][] = [
  [{ $sort: { _id: 1 } }],
  [{ $match: { component_name: 'thermo' } }, { $sort: { time_received: -1 } }, { $limit: 5 }],
  [{ $group: { _id: '$component_name', n: { $sum: 1 }, avg: { $avg: '$data.readings.temperature' } } }],
  [{ $match: { tags: 'calibrated' } }, { $project: { _id: 1, robot_name: 1, data: 1 } }],
  [{ $group: { _id: '$robot_name', max: { $max: '$data.readings.humidity' }, last: { $last: '$time_synced' } } }, { $sort: { _id: 1 } }],
  [{ $match: { time_synced: { $gte: new Date(today - 2 * DAY) } } }, { $count: 'n' }],
];

for (const [i, stages] of MQL.entries()) {
  test.serial(`MQL, the same documents in both modes: pipeline ${i} ${JSON.stringify(stages).slice(0, 60)}`, async (t) => {
    const [embedded, scaled] = await Promise.all(engines.map((e) => e.mql.run('org-a', stages, { sourceType: 'STANDARD' })));
    t.true(embedded.length > 0);
    t.deepEqual(scaled, embedded);
  });
}

test.serial("tenancy: another organization's rows never reach the scale-out query's DuckDB, nor can it read their segment files", async (t) => {
  // org-b's segments are in the local cache now.
  const b = await engines[1].sql.query('org-b', 'SELECT count(*) AS n FROM readings');
  t.true(Number(b[0].n) > 0);
  const bFiles = (await pg.query("SELECT content_hash FROM tabular_segments WHERE organization_id = 'org-b'")).map((r) =>
    scaleOut.readings.cache.pathOf(String(r.content_hash)),
  );
  t.is(bFiles.length, 3);
  const conn = await scaleOut.connect('org-a');
  try {
    // Internal rows included: the DuckDB holds exactly org-a's rows, as PostgreSQL and the segments had them.
    const [row] = (
      await conn.runAndReadAll("SELECT count(*) AS n, count(*) FILTER (WHERE organization_id <> 'org-a') AS others FROM tabular_data")
    ).getRowObjectsJS();
    const [duckRow] = await duck.query("SELECT count(*) AS n FROM tabular_data WHERE organization_id = 'org-a'");
    t.is(row.others, 0n);
    t.is(row.n, duckRow.n as bigint);
    for (const file of bFiles) {
      await t.throwsAsync(conn.run(`SELECT count(*) FROM read_parquet('${file}')`), { message: /Permission Error|disabled by configuration/ });
    }
    await t.throwsAsync(conn.run('SET enable_external_access = true'), { message: /lock|configuration/i });
  } finally {
    conn.closeSync();
  }
  for (const engine of engines) {
    t.deepEqual(await engine.sql.query('org-a', 'SELECT DISTINCT organization_id FROM readings'), [{ organization_id: 'org-a' }]);
    t.deepEqual(await engine.mql.run('org-a', [{ $match: { organization_id: 'org-b' } }], { sourceType: 'STANDARD' }), []);
  }
});

test.serial('a segment is fetched into the local cache once, and a new upload shows in the next query (the tail is read per query)', async (t) => {
  const fetches = scaleOut.readings.cache.fetches;
  await engines[1].sql.query('org-a', 'SELECT count(*) FROM readings');
  t.is(scaleOut.readings.cache.fetches, fetches, 'cached segments are not fetched again');
  const { capture, points } = upload(99, 'org-a');
  for (const store of [duck, pg] as const) await insertTabular(store, capture, points, 'late-upload');
  await duck.execute('UPDATE tabular_data SET time_synced = (SELECT time_synced FROM tabular_data WHERE upload_id = ? LIMIT 1) WHERE upload_id = ?', [
    'late-upload',
    'late-upload',
  ]);
  const [pgSynced] = await pg.query("SELECT time_synced FROM tabular_data WHERE upload_id = 'late-upload' LIMIT 1");
  await duck.execute("UPDATE tabular_data SET time_synced = ? WHERE upload_id = 'late-upload'", [pgSynced.time_synced as Date]);
  const sql = "SELECT count(*) AS n, max(time_synced) AS last FROM readings WHERE robot_name = 'robot-1'";
  const [embedded, scaled] = await Promise.all(engines.map((e) => e.sql.query('org-a', sql)));
  t.deepEqual(scaled, embedded);
});
