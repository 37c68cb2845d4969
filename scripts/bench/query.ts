#!/usr/bin/env node
// bench:query — the query engine against its anchors, measured in the same run:
//   SQL: a GROUP BY over 10M readings through the sandbox (parse check, TEMP view, limits) vs the same
//        query run directly on DuckDB;
//   MQL: $match + $group over 1M readings through the engine (push-down + mingo worker) vs mingo alone
//        over the same documents already in memory.
// Sizes can be scaled down with QUERY_BENCH_SQL_ROWS / QUERY_BENCH_MQL_ROWS.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { aggregate } from 'mingo';
import { Store } from '../../cloud/store/store.js';
import { SqlSandbox } from '../../cloud/query/sql/sql-sandbox.js';
import { MqlRunner, readingsSql } from '../../cloud/query/mql/mql-runner.js';
import { MingoPool } from '../../cloud/query/mql/mingo-pool.js';
import { planPushdown } from '../../cloud/query/mql/pushdown.js';
import { readingsScope } from '../../cloud/query/sql/readings-view.js';
import { dateFieldsOf, scanDocuments } from '../../cloud/query/mql/document-scan.js';

const SQL_ROWS = Number(process.env.QUERY_BENCH_SQL_ROWS ?? 10_000_000);
const MQL_ROWS = Number(process.env.QUERY_BENCH_MQL_ROWS ?? 1_000_000);
const REPEATS = 3;

/**
 * Medians of the engine and its anchor, measured alternately so that both see the same machine load
 * (the CPU is shared; measuring one after the other would charge load changes to one side).
 */
async function medians(engine: () => Promise<unknown>, anchor: () => Promise<unknown>): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < REPEATS; i++) {
    for (const [k, fn] of [
      [0, engine],
      [1, anchor],
    ] as const) {
      const t0 = performance.now();
      await fn();
      times[k].push(performance.now() - t0);
    }
  }
  const mid = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(REPEATS / 2)];
  return [mid(times[0]), mid(times[1])];
}

const ms = (x: number) => `${x.toFixed(0)} ms`;
// Sums may be added in another order by DuckDB than by mingo: compare to 12 significant digits.
const same = (a: unknown, b: unknown) => {
  const round = (_k: string, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v);
  return JSON.stringify(a, round) === JSON.stringify(b, round);
};
const ratio = (a: number, b: number) => `${(a / b).toFixed(a / b < 0.1 ? 4 : 2)}x`;
const perSec = (rows: number, t: number) => `${(((rows / t) * 1000) / 1e6).toFixed(1)} M rows/s`;

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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-query-'));
  const store = await Store.open(dir, { readers: 1 });
  const pool = new MingoPool({ threads: 1, maxHeapMb: 8192 });
  try {
    let t0 = performance.now();
    await generate(store, 'org-sql', SQL_ROWS, 1);
    await generate(store, 'org-mql', MQL_ROWS, SQL_ROWS + 1);
    console.log(`generated ${SQL_ROWS} + ${MQL_ROWS} readings in ${ms(performance.now() - t0)}`);
    const connect = () => store.instance.connect();
    const limits = { timeoutMs: 600_000, maxRows: 100_000, maxBytes: 4_000_000 };

    // ---- SQL ----
    const sandbox = new SqlSandbox(connect, limits);
    const userSql = `SELECT component_name, count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg_t
      FROM readings GROUP BY component_name ORDER BY component_name`;
    const rawSql = `SELECT component_name, count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg_t
      FROM tabular_data WHERE organization_id = 'org-sql' GROUP BY component_name ORDER BY component_name`;
    const raw = await connect();
    const rawRows = (await raw.runAndReadAll(rawSql)).getRowObjectsJS();
    const sandboxRows = await sandbox.query('org-sql', userSql);
    if (sandboxRows.length !== rawRows.length || Number(rawRows[0].n) !== sandboxRows[0].n) throw new Error('SQL results differ');
    const [tSandbox, tRaw] = await medians(
      () => sandbox.query('org-sql', userSql),
      async () => (await raw.runAndReadAll(rawSql)).getRowObjectsJS(),
    );
    raw.closeSync();
    console.log(`\nSQL GROUP BY over ${SQL_ROWS} rows (median of ${REPEATS})`);
    console.log(`  sandboxed TabularDataBySQL: ${ms(tSandbox)}  (${perSec(SQL_ROWS, tSandbox)})`);
    console.log(`  raw DuckDB (anchor):        ${ms(tRaw)}  (${perSec(SQL_ROWS, tRaw)})`);
    console.log(`  ratio sandbox / raw DuckDB: ${ratio(tSandbox, tRaw)}`);

    // ---- MQL ----
    const pipeline = [
      { $match: { component_name: { $in: ['sensor-1', 'sensor-2', 'sensor-3', 'sensor-4'] } } },
      { $group: { _id: '$component_name', n: { $sum: 1 }, avg: { $avg: '$data.readings.temperature' } } },
      { $sort: { _id: 1 } },
    ];
    const runner = new MqlRunner(connect, pool, async () => [], { limits, maxScanRows: 5_000_000 });
    t0 = performance.now();
    const loader = await connect();
    const full = planPushdown([]);
    const everything = await scanDocuments(loader, readingsSql(full, readingsScope('org-mql')), dateFieldsOf(full.fields), {
      timeoutMs: 600_000,
      maxRows: 5_000_000,
    });
    loader.closeSync();
    console.log(`\nloaded ${everything.length} full documents for mingo alone in ${ms(performance.now() - t0)} (not counted below)`);
    const expected = aggregate(everything, pipeline);
    const actual = await runner.run('org-mql', pipeline, { sourceType: 'STANDARD' });
    if (!same(expected, actual)) throw new Error(`MQL results differ: ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`);
    const [tEngine, tMingo] = await medians(
      () => runner.run('org-mql', pipeline, { sourceType: 'STANDARD' }),
      async () => aggregate(everything, pipeline),
    );
    console.log(`MQL $match + $group over ${MQL_ROWS} rows (median of ${REPEATS})`);
    console.log(`  TabularDataByMQL (push-down + mingo): ${ms(tEngine)}  (${perSec(MQL_ROWS, tEngine)})`);
    console.log(`  mingo alone, documents in memory (anchor): ${ms(tMingo)}  (${perSec(MQL_ROWS, tMingo)})`);
    console.log(`  ratio engine / mingo alone: ${ratio(tEngine, tMingo)}`);
    const plan = planPushdown(pipeline);
    const sqlPart = plan.group ? `WHERE (${plan.where.length} term) + $group` : `WHERE (${plan.where.length} term), fields [${plan.fields.join(', ')}]`;
    console.log(`  push-down: ${sqlPart} in DuckDB; residual in mingo: ${plan.residual.map((s) => Object.keys(s)[0]).join(' ') || 'none'}`);

    // A selective $match (one component, the last tenth of the time range): push-down skips most rows.
    const since = new Date(Date.parse('2026-01-01T00:00:00Z') + (SQL_ROWS + Math.floor(MQL_ROWS * 0.9)) * 1000);
    const selective = [
      { $match: { component_name: 'sensor-3', time_received: { $gte: since } } },
      { $group: { _id: '$component_name', n: { $sum: 1 }, avg: { $avg: '$data.readings.temperature' } } },
    ];
    const expectedSel = aggregate(everything, selective);
    const actualSel = await runner.run('org-mql', selective, { sourceType: 'STANDARD' });
    if (!same(expectedSel, actualSel)) throw new Error(`selective MQL results differ: ${JSON.stringify(actualSel)} vs ${JSON.stringify(expectedSel)}`);
    const [tEngineSel, tMingoSel] = await medians(
      () => runner.run('org-mql', selective, { sourceType: 'STANDARD' }),
      async () => aggregate(everything, selective),
    );
    console.log(`MQL selective $match (1/80 of rows) + $group over ${MQL_ROWS} rows (median of ${REPEATS})`);
    console.log(`  TabularDataByMQL: ${ms(tEngineSel)};  mingo alone: ${ms(tMingoSel)};  ratio ${ratio(tEngineSel, tMingoSel)}`);

    // A $group that SQL does not do ($max): DuckDB filters and reads two columns, mingo groups.
    const inMingo = [pipeline[0], { $group: { _id: '$component_name', top: { $max: '$data.readings.temperature' }, n: { $sum: 1 } } }];
    const expectedMingo = aggregate(everything, inMingo);
    const actualMingo = await runner.run('org-mql', inMingo, { sourceType: 'STANDARD' });
    if (!same(expectedMingo, actualMingo)) throw new Error('MQL ($max) results differ');
    const [tEngineM, tMingoM] = await medians(
      () => runner.run('org-mql', inMingo, { sourceType: 'STANDARD' }),
      async () => aggregate(everything, inMingo),
    );
    console.log(`MQL $match + $group with $max (grouped by mingo) over ${MQL_ROWS} rows (median of ${REPEATS})`);
    console.log(`  TabularDataByMQL: ${ms(tEngineM)};  mingo alone: ${ms(tMingoM)};  ratio ${ratio(tEngineM, tMingoM)}`);
  } finally {
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
