#!/usr/bin/env node
// bench:scale — issue 33's scale-out mode against its anchors, measured in the same run on a PostgreSQL
// server of its own (cloud/testing/postgres.ts: fsync on):
//   ingest:     uploads of BENCH_SCALE_POINTS readings, 4 at a time. The anchor: a raw batched insert of
//               the same rows into the same table (node-postgres, one statement per upload, 4 connections:
//               per-row columns as unnest() arrays, the anchor, and a multi-row INSERT ... VALUES). End to
//               end (scripts/bench/scale-upload.ts), the figure the targets apply to: a real `platform-cloud
//               serve` in the scale-out mode (a database on this run's PostgreSQL, S3 on s3rver), a machine
//               made by the admin CLI, DataCaptureUpload requests over gRPC as a machine's data manager sends
//               them (its CloudLink, upload-body.ts); and the same through the embedded default's cloud (no
//               flags), the floor of the client and gRPC path here. Without gRPC: the ingest path in-process
//               (insertTabular on a PgStore: seq range reserved, day partition checked, one INSERT ...
//               SELECT over unnest; and on the DuckDB Store). Targets: >= 50k readings/s end to end and
//               >= 0.5x the raw insert. Rounds interleave (raw, scale-out through gRPC, embedded through
//               gRPC, in-process); CPU per 1,000 readings of the client, clouds and PostgreSQL is printed
//               (scripts/bench/scale-cpu.ts). BENCH_SCALE_CLOUD_NODE_FLAGS: node flags for the spawned
//               clouds (e.g. `--cpu-prof --cpu-prof-dir={dir}`, {dir} a fresh temp dir) to profile them.
//               Measured 06:54 UTC (load 5.2-6.4, 2 shared cores): end to end 145.1k and 122.7k readings/s
//               against raw 196.5k and 175.2k (0.74x, 0.70x), the embedded cloud through gRPC 120.1k and
//               115.8k; at 06:58 (load 2.1-2.3) 126.0k and 128.2k against 174.7k and 185.8k (0.72x,
//               0.69x), embedded 114.5k and 115.0k (cloud/store/README.md: the CPU split, what was cut).
//   sql:        a GROUP BY over SCALE_SQL_ROWS (default 10M) readings sealed into Parquet by the sealer,
//               through the scale-out engine, against raw embedded DuckDB on the same rows
//               (scripts/bench/scale-sql.ts). Target: <= 1.5x.
//   page:       TabularDataByFilter's first page (limit 50, newest first) at SCALE_PAGE_ROWS (default 1M)
//               readings on PostgreSQL, against the same SELECT sent raw and the embedded default on the
//               same generated rows (scripts/bench/scale-page.ts). Target: <= 20 ms.
// Sizes: BENCH_SCALE_UPLOADS (default 200), BENCH_SCALE_POINTS (1000 per upload), BENCH_SCALE_ROUNDS (2), SCALE_SQL_ROWS;
// SCALE_PAGE_ROWS; BENCH_SCALE_PARTS names the parts to run (default all: ingest,sql,page).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { PartInfo } from '../../cloud/data/parts.js';
import { insertTabular } from '../../cloud/datasync/tabular-ingest.js';
import type { TabularPoint } from '../../cloud/datasync/ingest.js';
import { FileBlobStore } from '../../cloud/store/blob-store.js';
import { ensureReadingsPartition } from '../../cloud/store/pg-readings.js';
import { PgStore } from '../../cloud/store/pg-store.js';
import { Store } from '../../cloud/store/store.js';
import { startPostgres, type PostgresServer } from '../../cloud/testing/postgres.js';
import { removeDataDir, tempDataDir } from '../../cloud/testing/spawn-cloud.js';
import { ownCpuMs, postgresCpuMs } from './scale-cpu.js';
import { benchScalePage } from './scale-page.js';
import { benchScaleSql } from './scale-sql.js';
import { scaleOutCloud, startUploadBench, type UploadBench } from './scale-upload.js';

const UPLOADS = Number(process.env.BENCH_SCALE_UPLOADS ?? 200);
const POINTS = Number(process.env.BENCH_SCALE_POINTS ?? 1000);
const CONCURRENCY = 4;
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 2);
const PARTS = new Set((process.env.BENCH_SCALE_PARTS ?? 'ingest,sql,page').split(','));
const CLOUD_NODE_FLAGS = (process.env.BENCH_SCALE_CLOUD_NODE_FLAGS ?? '').split(' ').filter(Boolean);

const part: PartInfo = {
  kind: 'part',
  partId: 'part-1',
  partName: 'main',
  machineId: 'machine-1',
  robotName: 'rover',
  locationId: 'loc-1',
  organizationId: 'org-bench',
};
const capture = { part, componentType: 'rdk:component:sensor', componentName: 'thermometer', methodName: 'Readings', tags: ['bench'] };

/** One upload's points: a reading a millisecond apart, of the size a sensor sends. */
function pointsOf(upload: number): TabularPoint[] {
  const base = Date.parse('2026-11-01T00:00:00Z') + upload * POINTS;
  return Array.from({ length: POINTS }, (_, i) => ({
    timeRequested: new Date(base + i),
    timeReceived: new Date(base + i + 1),
    data: { readings: { temperature: 20 + ((upload + i) % 100) / 10, humidity: (upload * 7 + i) % 100 } },
  }));
}

/** Runs fn(upload) for every upload, CONCURRENCY at a time; returns readings per second. */
async function ingestRate(fn: (upload: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < UPLOADS) await fn(next++);
    }),
  );
  return (UPLOADS * POINTS) / ((performance.now() - start) / 1000);
}

const columns = `seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id, part_name, component_type,
  component_name, method_name, method_parameters, tags, time_requested, time_received, time_synced, data, internal, size_bytes`;

/**
 * The anchors: the same rows written by plain node-postgres into the same table, one statement per
 * upload, with no seq reservation and no partition check. 'unnest' sends each per-row column as one
 * array parameter and the upload's constants once (the fastest plain statement found here; the ratio is
 * taken against it), 'values' a
 * multi-row INSERT ... VALUES of 19 parameters per row.
 */
async function rawInsertRate(url: string, form: 'unnest' | 'values'): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const perRow = 19;
  const values = `INSERT INTO tabular_data (${columns}) VALUES ${Array.from(
    { length: POINTS },
    (_, r) => `(${Array.from({ length: perRow }, (_, c) => `$${r * perRow + c + 1}`).join(', ')})`,
  ).join(', ')}`;
  // Per-row columns as arrays, the upload's constants (ids, names, tags) as plain parameters.
  const unnest = `INSERT INTO tabular_data (${columns})
    SELECT r.seq, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::json, $13::varchar[], r.requested, r.received, $16, r.data, $18, r.size
    FROM unnest($1::bigint[], $14::timestamptz[], $15::timestamptz[], $17::json[], $19::integer[]) AS r(seq, requested, received, data, size)`;
  let seq = 10_000_000_000 + (form === 'values' ? 5_000_000_000 : 0);
  const free = [...clients];
  try {
    return await ingestRate(async (upload) => {
      const client = free.pop()!;
      try {
        const uploadId = randomUUID();
        const synced = new Date();
        const rows = pointsOf(upload).map((p) => {
          const json = JSON.stringify(p.data);
          return [
            seq++,
            uploadId,
            part.organizationId,
            part.locationId,
            part.machineId,
            part.robotName,
            part.partId,
            part.partName,
            capture.componentType,
            capture.componentName,
            capture.methodName,
            null,
            capture.tags,
            p.timeRequested,
            p.timeReceived,
            synced,
            json,
            false,
            Buffer.byteLength(json),
          ];
        });
        if (form === 'values') await client.query(values, rows.flat());
        else {
          const column = (c: number) => rows.map((r) => r[c]);
          const [first] = rows;
          await client.query(unnest, [column(0), ...first.slice(1, 13), column(13), column(14), first[15], column(16), first[17], column(18)]);
        }
      } finally {
        free.push(client);
      }
    });
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

async function freshDatabase(server: PostgresServer): Promise<string> {
  const name = `bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return server.url.replace(/\/postgres$/, `/${name}`);
}

const rate = (r: number) => `${Math.round(r).toLocaleString('en-US')} readings/s`;
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

/** CPU milliseconds of this process and of the PostgreSQL server, summed over the calls of `measure`. */
function cpuAccount(server: PostgresServer) {
  const account = { client: 0, postgres: 0, readings: 0 };
  return {
    account,
    async measure<T>(readings: number, fn: () => Promise<T>): Promise<T> {
      const before = { client: ownCpuMs(), postgres: postgresCpuMs(server.dir) };
      const result = await fn();
      account.client += ownCpuMs() - before.client;
      account.postgres += postgresCpuMs(server.dir) - before.postgres;
      account.readings += readings;
      return result;
    },
    /** Milliseconds per 1,000 readings. */
    per1000: (ms: number) => ((ms * 1000) / account.readings).toFixed(1),
  };
}

async function benchIngest(server: PostgresServer): Promise<void> {
  console.log(`\ningest: ${UPLOADS} uploads of ${POINTS} readings, ${CONCURRENCY} at a time`);
  const blobDir = tempDataDir();
  const store = await PgStore.open(await freshDatabase(server), { poolSize: CONCURRENCY * 2, blobs: new FileBlobStore(blobDir) });
  const rawUrl = await freshDatabase(server);
  const rawStore = await PgStore.open(rawUrl, { poolSize: 2 });
  const duckDir = tempDataDir();
  const duck = await Store.open(duckDir);
  const options = { uploads: UPLOADS, points: POINTS, concurrency: CONCURRENCY, cloudNodeFlags: CLOUD_NODE_FLAGS };
  const s3 = await scaleOutCloud(await freshDatabase(server));
  const clouds: UploadBench[] = [];
  try {
    await ensureReadingsPartition(rawStore, new Date());
    await rawStore.close();
    // The end-to-end clouds: the scale-out mode, and the embedded default (no flags) as the floor of
    // the client and gRPC path.
    clouds.push(await startUploadBench(s3, options), await startUploadBench({ args: [], env: {} }, options));
    const [scaleOutCloudBench, embeddedCloudBench] = clouds;
    // Rounds alternate (raw, scale-out through gRPC, embedded through gRPC, scale-out in-process) so
    // that load on the shared machine falls on each; each figure is the best of its rounds.
    const raw: number[] = [];
    const scaled: number[] = [];
    const rawCpu = cpuAccount(server);
    const scaleOutCpu = cpuAccount(server);
    const inProcessCpu = cpuAccount(server);
    const n = UPLOADS * POINTS;
    for (let round = 0; round < ROUNDS; round++) {
      raw.push(await rawCpu.measure(n, () => rawInsertRate(rawUrl, 'unnest')));
      await scaleOutCpu.measure(n, () => scaleOutCloudBench.round());
      await embeddedCloudBench.round();
      scaled.push(await inProcessCpu.measure(n, () => ingestRate((u) => insertTabular(store, capture, pointsOf(u)))));
    }
    const rawValues = await rawInsertRate(rawUrl, 'values');
    const embedded = await ingestRate((u) => insertTabular(duck, capture, pointsOf(u)));
    const [{ n: stored }] = await store.query('SELECT count(*) AS n FROM tabular_data');
    if (Number(stored) !== ROUNDS * n) throw new Error(`scale-out ingest stored ${stored} rows, expected ${ROUNDS * n}`);
    const scaleOutGrpc = await scaleOutCloudBench.finish();
    const embeddedGrpc = await embeddedCloudBench.finish();
    const best = (xs: number[]) => Math.max(...xs);
    const rounds = (xs: number[]) => `(rounds: ${xs.map(rate).join(', ')})`;
    console.log(`  raw batched PostgreSQL insert (unnest arrays, the anchor): ${rate(best(raw))}  ${rounds(raw)}`);
    console.log(`  raw batched PostgreSQL insert (multi-row VALUES):         ${rate(rawValues)}`);
    console.log("  end to end (platform-cloud serve, DataCaptureUpload over gRPC from a part's CloudLink):");
    console.log(`    scale-out (PostgreSQL + S3 on s3rver):                  ${rate(scaleOutGrpc.best)}  ${rounds(scaleOutGrpc.rounds)}`);
    console.log(`    embedded default (no flags), same client and gRPC path: ${rate(embeddedGrpc.best)}  ${rounds(embeddedGrpc.rounds)}`);
    console.log(`    rows checked: ${scaleOutGrpc.rows} scale-out, ${embeddedGrpc.rows} embedded`);
    const { account: r, per1000: rawMs } = rawCpu;
    const { account: so, per1000: soMs } = scaleOutCpu;
    console.log(
      `  CPU per 1,000 readings: raw anchor: client ${rawMs(r.client)} ms, PostgreSQL ${rawMs(r.postgres)} ms; scale-out end to end: client ${soMs(so.client)} ms, cloud ${scaleOutGrpc.cloudCpuMs.toFixed(1)} ms, PostgreSQL ${soMs(so.postgres)} ms; embedded end to end: client ${embeddedGrpc.clientCpuMs.toFixed(1)} ms, cloud ${embeddedGrpc.cloudCpuMs.toFixed(1)} ms`,
    );
    console.log('  the ingest path without gRPC (in-process):');
    console.log(`    scale-out (insertTabular on PgStore):                   ${rate(best(scaled))}  ${rounds(scaled)}`);
    console.log(`    embedded (insertTabular on the DuckDB Store):           ${rate(embedded)}`);
    const { account: ip, per1000: ipMs } = inProcessCpu;
    console.log(
      `    ratio to raw: ${(best(scaled) / best(raw)).toFixed(2)}x; CPU per 1,000 readings: client ${ipMs(ip.client)} ms, PostgreSQL ${ipMs(ip.postgres)} ms`,
    );
    const e2e = scaleOutGrpc.best;
    const ratio = e2e / best(raw);
    console.log(
      `  end to end, target >= 50,000 readings/s: ${verdict(e2e >= 50_000)}; ratio to raw ${ratio.toFixed(2)}x, target >= 0.5x: ${verdict(ratio >= 0.5)}; ratio to the embedded cloud through gRPC ${(e2e / embeddedGrpc.best).toFixed(2)}x`,
    );
  } finally {
    for (const cloud of clouds) await cloud.stop().catch(() => undefined);
    await s3.s3.stop();
    await store.close();
    await duck.close();
    removeDataDir(duckDir);
    removeDataDir(blobDir);
  }
}

async function main(): Promise<void> {
  const server = await startPostgres();
  try {
    if (PARTS.has('ingest')) await benchIngest(server);
    if (PARTS.has('sql')) {
      const rows = Number(process.env.SCALE_SQL_ROWS ?? 10_000_000);
      console.log(`\nsql: GROUP BY over ${rows} sealed readings`);
      const r = await benchScaleSql({ pgUrl: await freshDatabase(server), rows, log: (line) => console.log(`  ${line}`) });
      console.log(`  target <= 1.5x raw embedded DuckDB: ${verdict(r.ratio <= 1.5)}`);
    }
    if (PARTS.has('page')) {
      console.log('\npage: the first page of TabularDataByFilter');
      const r = await benchScalePage({ pgUrl: await freshDatabase(server), log: (line) => console.log(`  ${line}`) });
      console.log(`  target <= 20 ms (scale-out p50): ${verdict(r.scaleOutMs <= 20)}`);
    }
  } finally {
    await server.stop();
  }
}

await main();
