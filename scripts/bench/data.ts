// npm run bench:data — the cloud data service against raw DuckDB, in the same run.
//
//   ingest     tabular points/s through DataCaptureUpload (batches of BATCH points, 2 uploads in
//              flight) vs. the same rows appended to a DuckDB file directly (same batches, one
//              transaction each);
//   binary     MB/s through DataCaptureUpload (1 MiB items) vs. the same content written durably
//              (temp file, fsync, rename) plus its metadata row inserted into DuckDB;
//   first page TabularDataByFilter / BinaryDataByFilter (limit 50, newest first) at ROWS rows vs. the
//              same SELECT ... ORDER BY ... LIMIT 50 on the anchor database;
//   paginate   all ROWS rows through the `last` cursor (limit PAGE) vs. the same keyset queries.
//
// The tabular ROWS rows arrive through the service's own uploads (the ingest measurement). ROWS
// binary metadata rows are seeded with SQL into both databases while the service is stopped (a
// million uploads of content would measure the disk, not the query path); their content is shared
// among 100 blobs. Targets: >= 50k points/s ingest, <= 20 ms first page at 1M rows.
import { DuckDBConnection, DuckDBDataChunk, DuckDBInstance, listValue, timestampTZValue, type DuckDBValue } from '@duckdb/node-api';
import { spawnServing } from '../../core/serving/testing/spawn-serving.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callAdminChannel } from '../../cloud/admin/channel.js';
import { createCloudClient, type CloudClient } from '../../cloud/client/cloud-client.js';
import { Order } from '../../cloud/client/data-client.js';
import { FileBlobStore } from '../../cloud/store/blob-store.js';
import { schemaStatements } from '../../cloud/store/schema.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const PAGE = Number(process.env.BENCH_PAGE ?? 10_000);
const BINARY_ITEMS = Number(process.env.BENCH_BINARY_ITEMS ?? 64);
const BINARY_BYTES = 1024 * 1024;
const REPS = 30;

const main = fileURLToPath(new URL('../../cloud/server/main.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'bench-data-'));
const serviceDir = join(root, 'service');
const anchorDir = join(root, 'anchor');
const t0 = Date.now() - 40 * 24 * 3600_000;
const sensor = 'rdk:component:sensor';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];
const fmt = (x: number, d = 1) => x.toFixed(d);

function pointsOf(batch: number): { data: Record<string, unknown>[]; times: [Date, Date][] } {
  const data: Record<string, unknown>[] = [];
  const times: [Date, Date][] = [];
  for (let i = 0; i < BATCH; i++) {
    const n = batch * BATCH + i;
    data.push({ readings: { temperature: 20 + (n % 100) / 10, humidity: n % 97 } });
    const t = new Date(t0 + n * 2);
    times.push([t, new Date(t.getTime() + 1)]);
  }
  return { data, times };
}

async function startService(): Promise<{ address: string; stop: () => Promise<void> }> {
  const cloud = await spawnServing(main, ['serve', '--data-dir', serviceDir, '--port', '0'], { name: 'platform-cloud' });
  return { address: cloud.address, stop: async () => void (await cloud.stop()) };
}

async function admin<T>(action: string, args: Record<string, unknown>): Promise<T> {
  return (await callAdminChannel(serviceDir, action, args))!.result as T;
}

// ---- anchor: raw DuckDB ----

async function anchorIngest(conn: DuckDBConnection): Promise<number> {
  const tz = (d: Date) => timestampTZValue(BigInt(d.getTime()) * 1000n);
  const start = process.hrtime.bigint();
  let seq = 0n;
  for (let b = 0; b < ROWS / BATCH; b++) {
    const { data, times } = pointsOf(b);
    await conn.run('BEGIN TRANSACTION');
    const appender = await conn.createAppender('tabular_data');
    for (let s = 0; s < data.length; s += 2048) {
      const n = Math.min(2048, data.length - s);
      const chunk = DuckDBDataChunk.create(
        Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i)),
        n,
      );
      const same = (v: DuckDBValue) => new Array<DuckDBValue>(n).fill(v);
      const json = data.slice(s, s + n).map((d) => JSON.stringify(d));
      chunk.setColumns([
        Array.from({ length: n }, () => ++seq),
        same('upload'),
        same('org'),
        same('loc'),
        same('robot'),
        same('robot'),
        same('part'),
        same('part-main'),
        same(sensor),
        same('thermo'),
        same('Readings'),
        same(null),
        same(listValue([])),
        times.slice(s, s + n).map((p) => tz(p[0])),
        times.slice(s, s + n).map((p) => tz(p[1])),
        same(tz(new Date())),
        json,
        same(false),
        json.map((j) => j.length),
      ]);
      appender.appendDataChunk(chunk);
    }
    appender.closeSync();
    await conn.run('COMMIT');
  }
  return ROWS / (ms(start) / 1000);
}

async function anchorBinary(conn: DuckDBConnection, content: Buffer): Promise<number> {
  const blobs = new FileBlobStore(join(anchorDir, 'blobs'));
  const start = process.hrtime.bigint();
  for (let i = 0; i < BINARY_ITEMS; i++) {
    await blobs.put(`org/b${i}`, content);
    await conn.run(
      `INSERT INTO binary_data (seq, binary_data_id, organization_id, location_id, robot_id, part_id, mime_type, tags, dataset_ids,
         time_requested, time_received, time_synced, file_size_bytes, blob_key) VALUES (?, ?, 'org', 'loc', 'robot', 'part', 'image/jpeg', [], [], now(), now(), now(), ?, ?)`,
      [BigInt(i + 1), `b${i}`, BigInt(content.length), `org/b${i}`],
    );
  }
  return (BINARY_ITEMS * content.length) / 1024 / 1024 / (ms(start) / 1000);
}

/** Seeds ROWS binary metadata rows (content shared among 100 blobs) into a database. */
async function seedBinary(conn: DuckDBConnection, org: string, loc: string, robot: string, part: string, blobRoot: string): Promise<void> {
  const blobs = new FileBlobStore(blobRoot);
  for (let i = 0; i < 100; i++) await blobs.put(`${org}/seed-${i}`, Buffer.alloc(2048, i));
  await conn.run(`DELETE FROM binary_data`);
  await conn.run(
    `INSERT INTO binary_data (seq, binary_data_id, organization_id, location_id, robot_id, robot_name, part_id, part_name, component_type,
       component_name, method_name, file_name, file_ext, mime_type, tags, dataset_ids, time_requested, time_received, time_synced,
       file_size_bytes, uri, blob_key, internal)
     SELECT i + 1, 'seed-' || i, ?, ?, ?, 'robot', ?, 'part-main', 'rdk:component:camera', 'cam', 'GetImages', '', '.jpg', 'image/jpeg',
       [], [], to_timestamp(? / 1000.0 + i * 0.002), to_timestamp(? / 1000.0 + i * 0.002), now(), 2048, 'platform://binary/seed-' || i,
       ? || '/seed-' || (i % 100), false
     FROM range(CAST(? AS BIGINT)) t(i)`,
    [org, loc, robot, part, t0, t0, org, BigInt(ROWS)],
  );
}

const firstPageSql = (table: string, cols: string) =>
  `SELECT ${cols} FROM ${table} WHERE organization_id = ? AND NOT internal ORDER BY time_requested DESC, seq DESC LIMIT 50`;
const tabularCols =
  'seq, epoch_us(time_requested) AS t_us, organization_id, location_id, robot_id, robot_name, part_id, part_name, component_type, component_name, method_name, method_parameters, tags, time_requested, time_received, data, size_bytes';
const binaryCols =
  'seq, epoch_us(time_requested) AS t_us, binary_data_id, organization_id, location_id, robot_id, robot_name, part_id, part_name, component_type, component_name, method_name, method_parameters, tags, mime_type, file_name, file_ext, uri, dataset_ids, time_requested, time_received, file_size_bytes, blob_key';

async function anchorFirstPage(conn: DuckDBConnection, table: string, cols: string, org: string): Promise<number[]> {
  const times: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const start = process.hrtime.bigint();
    (await conn.runAndReadAll(firstPageSql(table, cols), [org])).getRowObjectsJS();
    times.push(ms(start));
  }
  return times;
}

async function anchorPaginate(conn: DuckDBConnection, table: string, cols: string, org: string): Promise<{ ms: number; rows: number }> {
  const start = process.hrtime.bigint();
  let rows = 0;
  let last: { t: bigint; s: bigint } | undefined;
  for (;;) {
    const after = last ? ' AND time_requested <= ? AND (time_requested < ? OR seq < ?)' : '';
    const params: DuckDBValue[] = last ? [org, timestampTZValue(last.t), timestampTZValue(last.t), last.s] : [org];
    const page = (
      await conn.runAndReadAll(
        `SELECT ${cols} FROM ${table} WHERE organization_id = ? AND NOT internal${after} ORDER BY time_requested DESC, seq DESC LIMIT ${PAGE}`,
        params,
      )
    ).getRowObjectsJS();
    if (page.length === 0) break;
    rows += page.length;
    const tail = page[page.length - 1];
    last = { t: tail.t_us as bigint, s: tail.seq as bigint };
  }
  return { ms: ms(start), rows };
}

// ---- the service ----

async function serviceIngest(client: CloudClient, part: string): Promise<number> {
  const start = process.hrtime.bigint();
  let next = 0;
  const worker = async () => {
    for (let b = next++; b < ROWS / BATCH; b = next++) {
      const { data, times } = pointsOf(b);
      await client.dataClient.tabularDataCaptureUpload(data, part, sensor, 'thermo', 'Readings', times);
    }
  };
  await Promise.all([worker(), worker()]);
  return ROWS / (ms(start) / 1000);
}

async function serviceFirstPage(run: () => Promise<unknown>): Promise<number[]> {
  await run(); // warm the connection and the token
  const times: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const start = process.hrtime.bigint();
    await run();
    times.push(ms(start));
  }
  return times;
}

async function servicePaginate(page: (last: string) => Promise<{ count: number; last: string }>): Promise<{ ms: number; rows: number }> {
  const start = process.hrtime.bigint();
  let rows = 0;
  let last = '';
  for (;;) {
    const res = await page(last);
    if (res.count === 0) break;
    rows += res.count;
    last = res.last;
  }
  return { ms: ms(start), rows };
}

async function run(): Promise<void> {
  console.log(`bench:data  rows=${ROWS} batch=${BATCH} page=${PAGE} binary=${BINARY_ITEMS}x1MiB  (${root})`);
  // Absolute figures depend on what else runs; the ratio to raw DuckDB in the same run is the service's overhead.
  console.log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at start`,
  );
  let service = await startService();
  const org = (await admin<{ id: string }>('org.create', { name: 'bench' })).id;
  const machine = await admin<{ machine_id: string; part_id: string; location_id: string }>('machine.create', { org, name: 'robot' });
  const key = await admin<{ id: string; key: string }>('key.create', { org, role: 'owner' });
  const connect = (address: string) => createCloudClient({ serviceHost: address, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  let client = connect(service.address);

  const anchorDb = await DuckDBInstance.create(join(anchorDir + '.duckdb'));
  const anchor = await anchorDb.connect();
  for (const sql of schemaStatements) await anchor.run(sql);

  const ingestAnchor = await anchorIngest(anchor);
  const ingestService = await serviceIngest(client, machine.part_id);
  const content = Buffer.alloc(BINARY_BYTES, 7);
  const binaryAnchor = await anchorBinary(anchor, content);
  const binStart = process.hrtime.bigint();
  for (let i = 0; i < BINARY_ITEMS; i++) {
    await client.dataClient.binaryDataCaptureUpload(content, machine.part_id, 'rdk:component:camera', 'cam', 'GetImages', '.jpg', [new Date(), new Date()]);
  }
  const binaryService = (BINARY_ITEMS * BINARY_BYTES) / 1024 / 1024 / (ms(binStart) / 1000);

  // Seed 1M binary rows with the service stopped (one writer per DuckDB file), then restart it.
  client.close();
  await service.stop();
  {
    const db = await DuckDBInstance.create(join(serviceDir, 'platform.duckdb'));
    const conn = await db.connect();
    await seedBinary(conn, org, machine.location_id, machine.machine_id, machine.part_id, join(serviceDir, 'blobs'));
    await conn.run('CHECKPOINT');
    conn.closeSync();
    db.closeSync();
  }
  await seedBinary(anchor, 'org', 'loc', 'robot', 'part', join(anchorDir, 'blobs'));
  await anchor.run('CHECKPOINT');
  service = await startService();
  client = connect(service.address);
  const data = client.dataClient;

  const tabFirstService = await serviceFirstPage(() => data.tabularDataByFilter());
  const tabFirstAnchor = await anchorFirstPage(anchor, 'tabular_data', tabularCols, 'org');
  const binFirstService = await serviceFirstPage(() => data.binaryDataByFilter());
  const binFirstAnchor = await anchorFirstPage(anchor, 'binary_data', binaryCols, 'org');
  const tabAllService = await servicePaginate((last) => data.tabularDataByFilter({}, { limit: PAGE, last, sortOrder: Order.ORDER_DESCENDING }));
  const tabAllAnchor = await anchorPaginate(anchor, 'tabular_data', tabularCols, 'org');
  const binAllService = await servicePaginate((last) => data.binaryDataByFilter({}, { limit: PAGE, last, includeBinary: false }));
  const binAllAnchor = await anchorPaginate(anchor, 'binary_data', binaryCols, 'org');

  client.close();
  await service.stop();
  anchor.closeSync();
  anchorDb.closeSync();

  const rows: [string, string, string, string, string][] = [
    [
      'ingest tabular (points/s)',
      fmt(ingestService, 0),
      fmt(ingestAnchor, 0),
      fmt(ingestService / ingestAnchor, 2),
      ingestService >= 50_000 ? 'PASS >= 50k' : 'FAIL < 50k',
    ],
    ['binary upload (MB/s)', fmt(binaryService), fmt(binaryAnchor), fmt(binaryService / binaryAnchor, 2), ''],
    [
      `tabular first page p50 ms @${ROWS}`,
      fmt(median(tabFirstService), 2),
      fmt(median(tabFirstAnchor), 2),
      fmt(median(tabFirstService) / median(tabFirstAnchor), 2),
      median(tabFirstService) <= 20 ? 'PASS <= 20 ms' : 'FAIL > 20 ms',
    ],
    [`tabular first page p95 ms`, fmt(p95(tabFirstService), 2), fmt(p95(tabFirstAnchor), 2), fmt(p95(tabFirstService) / p95(tabFirstAnchor), 2), ''],
    [
      `binary first page p50 ms @${ROWS}`,
      fmt(median(binFirstService), 2),
      fmt(median(binFirstAnchor), 2),
      fmt(median(binFirstService) / median(binFirstAnchor), 2),
      median(binFirstService) <= 20 ? 'PASS <= 20 ms' : 'FAIL > 20 ms',
    ],
    [`binary first page p95 ms`, fmt(p95(binFirstService), 2), fmt(p95(binFirstAnchor), 2), fmt(p95(binFirstService) / p95(binFirstAnchor), 2), ''],
    [
      `tabular paginate all (s, ${tabAllService.rows} rows)`,
      fmt(tabAllService.ms / 1000, 2),
      fmt(tabAllAnchor.ms / 1000, 2),
      fmt(tabAllService.ms / tabAllAnchor.ms, 2),
      `${fmt(tabAllService.rows / (tabAllService.ms / 1000), 0)} rows/s`,
    ],
    [
      `binary paginate all (s, ${binAllService.rows} rows)`,
      fmt(binAllService.ms / 1000, 2),
      fmt(binAllAnchor.ms / 1000, 2),
      fmt(binAllService.ms / binAllAnchor.ms, 2),
      `${fmt(binAllService.rows / (binAllService.ms / 1000), 0)} rows/s`,
    ],
  ];
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at end`,
  );
  console.log(['measure', 'service', 'raw DuckDB', 'ratio', 'target'].join(' | '));
  for (const r of rows) console.log(r.join(' | '));
  if (tabAllService.rows !== ROWS || binAllService.rows !== ROWS)
    console.log(`WARNING: paginated ${tabAllService.rows}/${binAllService.rows} rows, expected ${ROWS}`);
  rmSync(root, { recursive: true, force: true });
  rmSync(anchorDir + '.duckdb', { force: true });
  rmSync(anchorDir + '.duckdb.wal', { force: true });
}

await run();
