#!/usr/bin/env node
// bench:pg — the PostgreSQL endpoint against its anchors, measured in the same run:
//   throughput: a 1M-row SELECT over `readings` fetched through the wire with node-postgres vs the same
//               query on DuckDB directly (rows read into JS values); target >= 0.5x;
//   latency:    p50/p99 of a parameterised point query (a named prepared statement, as drivers reuse them)
//               over loopback; target p50 <= 2 ms.
// Sizes can be scaled down with PG_BENCH_ROWS / PG_BENCH_POINT_QUERIES.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Store } from '../../cloud/store/store.js';
import { SqlSandbox } from '../../cloud/query/sql/sql-sandbox.js';
import { readingsSelect } from '../../cloud/query/sql/readings-view.js';
import { DatabaseUsers, databaseUsername } from '../../cloud/query/pg/database-users.js';
import { PgEndpoint } from '../../cloud/query/pg/pg-endpoint.js';

const ROWS = Number(process.env.PG_BENCH_ROWS ?? 1_000_000);
const POINT_QUERIES = Number(process.env.PG_BENCH_POINT_QUERIES ?? 2000);
const REPEATS = 5;
/** Garbage of one timed run (a million row objects) is collected before the next, so it is not charged to it. */
const collect = () => (globalThis as { gc?: () => void }).gc?.();
const ORG = 'org-bench';
const POINT_ORG = 'org-point';
const PASSWORD = 'benchmark password';

const SELECT = 'SELECT time_received, robot_id, component_name, data.readings.temperature::DOUBLE AS temperature FROM readings';

async function generate(store: Store, org: string, rows: number, firstSeq: number): Promise<void> {
  await store.execute(`INSERT INTO tabular_data (seq, upload_id, organization_id, location_id, robot_id, robot_name, part_id,
      part_name, component_type, component_name, method_name, method_parameters, tags, time_requested, time_received,
      time_synced, data, internal, size_bytes)
    SELECT ${firstSeq} + i, 'upload-' || (i // 1000), '${org}', 'loc-1', 'robot-' || (i % 10), 'rover-' || (i % 10), 'part-' || (i % 10),
      'main', 'rdk:component:sensor', 'sensor-' || (i % 8), 'Readings', '{}'::JSON, ['bench'],
      TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i), TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i),
      TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i),
      json_object('readings', json_object('temperature', (i % 400) / 10.0, 'humidity', i % 100)), false, 40
    FROM range(${rows}) t(i)`);
}

const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 0)} ms`;
const perSec = (rows: number, t: number) => `${(((rows / t) * 1000) / 1e6).toFixed(2)} M rows/s`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  const store = await Store.open(dir, { readers: 1 });
  const connect = () => store.instance.connect();
  let endpoint: PgEndpoint | undefined;
  const client = () =>
    new pg.Client({ host: '127.0.0.1', port: endpoint!.address()!.port, user: databaseUsername(ORG), password: PASSWORD, database: 'sensorData' });
  try {
    console.log(`generating ${ROWS} readings ...`);
    await generate(store, ORG, ROWS, 1);
    await generate(store, POINT_ORG, 1000, ROWS + 1);
    const users = new DatabaseUsers(store);
    await users.init();
    await users.configure(ORG, PASSWORD);
    await users.configure(POINT_ORG, PASSWORD);
    // The wire is the subject here, not the sandbox's gRPC result limits: give the statement time to stream.
    endpoint = new PgEndpoint({ users, sandbox: new SqlSandbox(connect, { timeoutMs: 600_000 }), host: '127.0.0.1', port: 0 });
    await endpoint.listen();

    // Throughput: engine (wire + node-postgres parsing) and anchor (DuckDB into JS values), alternately.
    const wire = client();
    await wire.connect();
    const direct = await connect();
    const anchorSql = `WITH readings AS (${readingsSelect(ORG)}) ${SELECT}`;
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < REPEATS; i++) {
      collect();
      let t0 = performance.now();
      const r = await wire.query(SELECT);
      times[0].push(performance.now() - t0);
      if (r.rows.length !== ROWS) throw new Error(`wire returned ${r.rows.length} rows, expected ${ROWS}`);
      collect();
      t0 = performance.now();
      const reader = await direct.runAndReadAll(anchorSql);
      const rows = reader.getRows();
      times[1].push(performance.now() - t0);
      if (rows.length !== ROWS) throw new Error(`DuckDB returned ${rows.length} rows, expected ${ROWS}`);
    }
    direct.closeSync();
    await wire.end();
    const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const [tw, td] = [mid(times[0]), mid(times[1])];

    // Latency: a point query with parameters, prepared once by name, over loopback. The throughput runs'
    // garbage is collected first: marking a heap of millions of dead rows would otherwise run beside it.
    collect();
    const point = new pg.Client({
      host: '127.0.0.1',
      port: endpoint.address()!.port,
      user: databaseUsername(POINT_ORG),
      password: PASSWORD,
      database: 'sensorData',
    });
    await point.connect();
    const lat: number[] = [];
    for (let i = 0; i < POINT_QUERIES + 50; i++) {
      const k = i % 1000;
      const t0 = performance.now();
      const r = await point.query({
        name: 'point',
        text: 'SELECT time_received, data FROM readings WHERE robot_id = $1 AND time_received = $2',
        values: [`robot-${k % 10}`, new Date(Date.parse('2026-01-01T00:00:00Z') + k * 1000)],
      });
      if (i >= 50) lat.push(performance.now() - t0); // the first 50 warm up the session and plan
      if (r.rows.length !== 1) throw new Error(`point query ${i} returned ${r.rows.length} rows`);
    }
    await point.end();
    lat.sort((a, b) => a - b);
    const p = (q: number) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))];

    const ratio = td / tw;
    console.log('');
    console.log('| case | endpoint | anchor | ratio | target |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| SELECT of ${ROWS} rows (4 columns) | ${ms(tw)} = ${perSec(ROWS, tw)} through the wire (node-postgres) | ${ms(td)} = ${perSec(ROWS, td)} DuckDB directly | ${ratio.toFixed(2)}x | >= 0.5x |`,
    );
    console.log(`| point query with 2 parameters, ${lat.length} runs | p50 ${ms(p(0.5))}, p99 ${ms(p(0.99))} | | | p50 <= 2 ms |`);
  } finally {
    await endpoint?.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
