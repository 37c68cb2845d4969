// bench:scale, the SQL part (issue 33): a GROUP BY over 10M sealed readings through the scale-out engine
// (cloud/query/sealed/: the organization's Parquet segment from the local cache, its DuckDB of its own,
// the sandbox) against the same query on raw embedded DuckDB over the same rows, measured alternately in
// the same run. Target: scale-out ≤ 1.5× raw embedded DuckDB.
//
// The rows are generated in PostgreSQL (one closed day of one organization) and sealed by the real
// sealer; the embedded anchor's table is loaded from that very segment, so both read the same data.
// scripts/bench/scale.ts calls benchScaleSql; run alone (npm run build first):
//   node --max-old-space-size=4096 dist/scripts/bench/scale-sql.js    (SCALE_SQL_ROWS=1000000 for a short run)
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { FileBlobStore, type BlobStore } from '../../cloud/store/blob-store.js';
import { ensureReadingsPartition } from '../../cloud/store/pg-readings.js';
import { PgStore } from '../../cloud/store/pg-store.js';
import { Store } from '../../cloud/store/store.js';
import { startScaleOutQuery } from '../../cloud/query/sealed/scale-out-query.js';
import { SqlSandbox } from '../../cloud/query/sql/sql-sandbox.js';
import { startPostgres } from '../../cloud/testing/postgres.js';

export interface ScaleSqlOptions {
  /** A PostgreSQL database to generate into (its tables are created by migrations); default: a server of its own. */
  pgUrl?: string;
  /** The blob store the segments go to; default: files in a temp dir. */
  blobs?: BlobStore;
  /** Sealed rows; default SCALE_SQL_ROWS or 10M. */
  rows?: number;
  repeats?: number;
  log?: (line: string) => void;
}

export interface ScaleSqlResult {
  rows: number;
  generateMs: number;
  sealMs: number;
  segmentBytes: number;
  /** The first scale-out query: the segment fetched from the blob store into the cache. */
  coldMs: number;
  /** Medians: scale-out TabularDataBySQL, the embedded sandbox, and raw embedded DuckDB. */
  scaleOutMs: number;
  embeddedSandboxMs: number;
  rawDuckDbMs: number;
  ratio: number;
}

const ORG = 'org-bench';
const USER_SQL = `SELECT component_name, count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg_t
  FROM readings GROUP BY component_name ORDER BY component_name`;
const RAW_SQL = `SELECT component_name, count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg_t
  FROM tabular_data WHERE organization_id = '${ORG}' GROUP BY component_name ORDER BY component_name`;

/** Medians of each function, run alternately so that all see the same machine load. */
async function medians(repeats: number, fns: (() => Promise<unknown>)[]): Promise<number[]> {
  const times = fns.map(() => [] as number[]);
  for (let i = 0; i < repeats; i++) {
    for (const [k, fn] of fns.entries()) {
      const t0 = performance.now();
      await fn();
      times[k].push(performance.now() - t0);
    }
  }
  return times.map((xs) => xs.sort((a, b) => a - b)[Math.floor(repeats / 2)]);
}

export async function benchScaleSql(options: ScaleSqlOptions = {}): Promise<ScaleSqlResult> {
  const rows = options.rows ?? Number(process.env.SCALE_SQL_ROWS ?? 10_000_000);
  const repeats = options.repeats ?? 5;
  const log = options.log ?? ((line: string) => console.log(line));
  const dir = mkdtempSync(join(tmpdir(), 'bench-scale-sql-'));
  const server = options.pgUrl ? undefined : await startPostgres({ fsync: 'off', max_wal_size: '4GB' });
  const store = await PgStore.open(options.pgUrl ?? server!.url, { blobs: options.blobs ?? new FileBlobStore(join(dir, 'blobs')), poolSize: 4 });
  const embedded = await Store.open(join(dir, 'embedded'), { readers: 1 });
  const scaleOut = startScaleOutQuery(store as PgStore & { blobs: BlobStore }, { dataDir: join(dir, 'node'), seal: false });
  try {
    // One closed day (two days ago) of one organization, generated inside PostgreSQL.
    const day = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000 - 2 * 86_400_000);
    await ensureReadingsPartition(store, day);
    let t0 = performance.now();
    await store.execute(
      `INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id, part_name,
         component_type, component_name, method_name, method_parameters, tags, time_requested, time_received, time_synced, data, internal, size_bytes)
       SELECT i, 'upload-' || (i / 1000), $1, 'loc-1', 'robot-' || (i % 10), 'rover-' || (i % 10), 'part-' || (i % 10), 'main',
         'rdk:component:sensor', 'sensor-' || (i % 8), 'Readings', NULL, ARRAY['bench']::varchar[],
         $2::timestamptz + i * interval '1 millisecond', $2::timestamptz + i * interval '1 millisecond', $2::timestamptz + (i / 1000) * interval '1 millisecond',
         json_build_object('readings', json_build_object('temperature', ((i % 400) / 10.0)::float8, 'humidity', i % 100)), false, 40
       FROM generate_series(1, $3::bigint) AS i`,
      [ORG, day, rows],
    );
    const generateMs = performance.now() - t0;
    log(`generated ${rows} readings in PostgreSQL in ${(generateMs / 1000).toFixed(1)} s`);

    t0 = performance.now();
    const [sealed] = await scaleOut.sealer.sealClosedDays();
    const sealMs = performance.now() - t0;
    if (!sealed || sealed.rows !== rows) throw new Error(`sealing sealed ${sealed?.rows ?? 0} rows, not ${rows}`);
    const segmentBytes = sealed.segments[0].bytes;
    log(
      `sealed them into ${(segmentBytes / 2 ** 20).toFixed(0)} MiB of Parquet in ${(sealMs / 1000).toFixed(1)} s (${((rows / sealMs) * 1000).toFixed(0)} rows/s)`,
    );

    const limits = { timeoutMs: 600_000 };
    const scaled = new SqlSandbox(scaleOut.connect, limits);
    t0 = performance.now();
    const first = await scaled.query(ORG, USER_SQL);
    const coldMs = performance.now() - t0;

    // The anchor: embedded DuckDB's own table, loaded from the same segment file.
    const [{ content_hash: hash }] = await store.query('SELECT content_hash FROM tabular_segments WHERE organization_id = $1', [ORG]);
    const copy = join(dir, 'segment.parquet');
    copyFileSync(scaleOut.readings.cache.pathOf(String(hash)), copy);
    await embedded.execute(`INSERT INTO tabular_data SELECT * FROM read_parquet('${copy}')`);
    const raw = await embedded.instance.connect();
    const sandbox = new SqlSandbox(() => embedded.instance.connect(), limits);
    const rawRows = (await raw.runAndReadAll(RAW_SQL)).getRowObjectsJS();
    if (rawRows.length !== first.length || rawRows.some((r, i) => Number(r.n) !== first[i].n)) throw new Error('scale-out and embedded results differ');

    const [scaleOutMs, embeddedSandboxMs, rawDuckDbMs] = await medians(repeats, [
      () => scaled.query(ORG, USER_SQL),
      () => sandbox.query(ORG, USER_SQL),
      async () => (await raw.runAndReadAll(RAW_SQL)).getRowObjectsJS(),
    ]);
    raw.closeSync();
    const ratio = scaleOutMs / rawDuckDbMs;
    log(`SQL GROUP BY over ${rows} sealed rows (median of ${repeats}):`);
    log(`  scale-out TabularDataBySQL (segment cached): ${scaleOutMs.toFixed(0)} ms   (first query, segment fetched: ${coldMs.toFixed(0)} ms)`);
    log(`  embedded TabularDataBySQL:                   ${embeddedSandboxMs.toFixed(0)} ms`);
    log(`  raw embedded DuckDB (anchor):                ${rawDuckDbMs.toFixed(0)} ms`);
    log(`  ratio scale-out / raw DuckDB: ${ratio.toFixed(2)}x (target <= 1.5x)`);
    return { rows, generateMs, sealMs, segmentBytes, coldMs, scaleOutMs, embeddedSandboxMs, rawDuckDbMs, ratio };
  } finally {
    await scaleOut.stop();
    await embedded.close();
    await store.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchScaleSql().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
