import test from 'ava';
import { status } from '@grpc/grpc-js';
import { SqlSandbox } from './sql-sandbox.js';
import { createTabularFixture, type TabularFixture } from '../testing/tabular-fixture.js';
import { StatusError } from '../../../core/serving/status-error.js';

let fx: TabularFixture;
let sandbox: SqlSandbox;

test.before(async () => {
  fx = await createTabularFixture();
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  await fx.insert([
    { organization_id: 'org-a', component_name: 'thermo', time_received: new Date(t0), tags: ['hot'], data: { readings: { temperature: 21.5 } } },
    { organization_id: 'org-a', component_name: 'thermo', time_received: new Date(t0 + 1000), data: { readings: { temperature: 23.5 } } },
    { organization_id: 'org-a', component_name: 'hygro', time_received: new Date(t0 + 2000), data: { readings: { humidity: 40 } } },
    { organization_id: 'org-b', component_name: 'thermo', time_received: new Date(t0), data: { readings: { temperature: 99 } } },
  ]);
  sandbox = new SqlSandbox(fx.connect);
});
test.after.always(() => fx.close());

// The columns FACTS.md lists for the readings table, spelled out here (not read from readings-view.ts) so
// that a change to the view fails these tests.
const DOCUMENTED_COLUMNS = [
  'organization_id',
  'location_id',
  'robot_id',
  'robot_name',
  'part_id',
  'part_name',
  'component_type',
  'component_name',
  'method_name',
  'time_requested',
  'time_received',
  'time_synced',
  'tags',
  'additional_parameters',
  'data',
];

test('readings has the documented columns', async (t) => {
  const [row] = await sandbox.query('org-a', 'SELECT * FROM readings LIMIT 1');
  t.deepEqual(Object.keys(row), DOCUMENTED_COLUMNS);
  t.true(row.time_received instanceof Date);
  t.deepEqual(row.additional_parameters, {});
});

test('data is nested and dot notation reaches into it', async (t) => {
  const rows = await sandbox.query('org-a', `SELECT data.readings.temperature AS temp FROM readings WHERE component_name = 'thermo' ORDER BY time_received`);
  t.deepEqual(rows, [{ temp: 21.5 }, { temp: 23.5 }]);
  const [all] = await sandbox.query('org-a', `SELECT data FROM readings WHERE component_name = 'hygro'`);
  t.deepEqual(all.data, { readings: { humidity: 40 } });
});

test('aggregates over JSON readings with a cast', async (t) => {
  const rows = await sandbox.query(
    'org-a',
    `SELECT component_name, avg(data.readings.temperature::DOUBLE) AS avg_temp, count(*) AS n
    FROM readings GROUP BY component_name ORDER BY component_name`,
  );
  t.deepEqual(rows, [
    { component_name: 'hygro', avg_temp: null, n: 1 },
    { component_name: 'thermo', avg_temp: 22.5, n: 2 },
  ]);
});

test('only the caller organisation is visible', async (t) => {
  const a = await sandbox.query('org-a', 'SELECT DISTINCT organization_id FROM readings');
  t.deepEqual(a, [{ organization_id: 'org-a' }]);
  const b = await sandbox.query('org-b', 'SELECT count(*) AS n FROM readings');
  t.deepEqual(b, [{ n: 1 }]);
  const none = await sandbox.query('org-c', 'SELECT count(*) AS n FROM readings');
  t.deepEqual(none, [{ n: 0 }]);
});

test('CTEs, subqueries, window functions, unnest and list functions work', async (t) => {
  const rows = await sandbox.query(
    'org-a',
    `WITH t AS (SELECT time_received, data.readings.temperature::DOUBLE AS v FROM readings WHERE component_name = 'thermo')
    SELECT v, v - lag(v) OVER (ORDER BY time_received) AS delta, (SELECT max(v) FROM t) AS top FROM t ORDER BY time_received`,
  );
  t.deepEqual(rows, [
    { v: 21.5, delta: null, top: 23.5 },
    { v: 23.5, delta: 2, top: 23.5 },
  ]);
  const tags = await sandbox.query('org-a', `SELECT unnest(tags) AS tag FROM readings WHERE len(tags) > 0`);
  t.deepEqual(tags, [{ tag: 'hot' }]);
  const series = await sandbox.query('org-a', `SELECT list_sum([x, 1]) AS s FROM range(3) r(x)`); // the table function
  t.deepEqual(series, [{ s: 1 }, { s: 2 }, { s: 3 }]);
});

test('a trailing semicolon is fine; two statements are refused', async (t) => {
  t.deepEqual(await sandbox.query('org-a', 'SELECT 1 AS one;'), [{ one: 1 }]);
  const err = await t.throwsAsync(sandbox.query('org-a', 'SELECT 1; SELECT 2'), { instanceOf: StatusError });
  t.is(err!.code, status.INVALID_ARGUMENT);
  t.regex(err!.message, /exactly one statement/);
});

test('empty SQL, bad organisation ids and syntax errors are INVALID_ARGUMENT naming the field', async (t) => {
  for (const [org, sql, re] of [
    ['org-a', '   ', /sql_query: must not be empty/],
    ['', 'SELECT 1', /organization_id: must not be empty/],
    ['org-a', 'SELEC 1', /sql_query: .*syntax error/i],
    ['org-a', 'SELECT nope FROM readings', /sql_query: .*nope/],
  ] as const) {
    const err = await t.throwsAsync(sandbox.query(org, sql), { instanceOf: StatusError });
    t.is(err!.code, status.INVALID_ARGUMENT, sql);
    t.regex(err!.message, re);
  }
});

test('row limit: a result over maxRows is refused naming the limit', async (t) => {
  const small = new SqlSandbox(fx.connect, { maxRows: 2 });
  t.is((await small.query('org-a', 'SELECT * FROM readings LIMIT 2')).length, 2);
  const err = await t.throwsAsync(small.query('org-a', 'SELECT * FROM readings'), { instanceOf: StatusError });
  t.is(err!.code, status.RESOURCE_EXHAUSTED);
  t.regex(err!.message, /2-row limit/);
});

test('byte limit: a result over maxBytes is refused naming the limit', async (t) => {
  const small = new SqlSandbox(fx.connect, { maxBytes: 200 });
  t.is((await small.query('org-a', 'SELECT 1 AS x')).length, 1);
  const err = await t.throwsAsync(small.query('org-a', `SELECT string_agg('xxxxxxxxxx', '') AS big FROM range(100)`), { instanceOf: StatusError });
  t.is(err!.code, status.RESOURCE_EXHAUSTED);
  t.regex(err!.message, /200-byte limit \(PLATFORM_QUERY_MAX_BYTES\)/);
});

test('statement timeout interrupts a long query', async (t) => {
  const quick = new SqlSandbox(fx.connect, { timeoutMs: 200 });
  const err = await t.throwsAsync(quick.query('org-a', 'SELECT count(*) FROM range(100000000000) a'), { instanceOf: StatusError });
  t.is(err!.code, status.DEADLINE_EXCEEDED);
  t.regex(err!.message, /200 ms time limit \(PLATFORM_QUERY_TIMEOUT_MS\)/);
});

test('query text over the size limit is refused before it is parsed', async (t) => {
  const small = new SqlSandbox(fx.connect, { maxTextBytes: 1024 });
  const err = await t.throwsAsync(small.query('org-a', `SELECT 1 WHERE ${Array(200).fill('1=1').join(' AND ')}`), { instanceOf: StatusError });
  t.is(err!.code, status.INVALID_ARGUMENT);
  t.regex(err!.message, /1024-byte limit \(PLATFORM_QUERY_MAX_TEXT_BYTES\)/);
  // Multi-byte characters count as bytes.
  await t.throwsAsync(small.query('org-a', `SELECT '${'é'.repeat(600)}' AS s`), { message: /1024-byte limit/ });
  t.deepEqual(await small.query('org-a', 'SELECT 1 AS one'), [{ one: 1 }]);
});

test('the time limit covers the statement check too', async (t) => {
  // A long chain of conditions is slow to parse and check; with a tiny limit, the check alone outlives it.
  const quick = new SqlSandbox(fx.connect, { timeoutMs: 1, maxTextBytes: 1 << 20 });
  const sql = `SELECT 1 WHERE ${Array(20000).fill('1=1').join(' AND ')}`;
  const err = await t.throwsAsync(quick.query('org-a', sql), { instanceOf: StatusError });
  t.is(err!.code, status.DEADLINE_EXCEEDED);
});

test('SHOW TABLES and DESCRIBE readings are answered read-only from the schema; DESCRIBE of another table names the one there is', async (t) => {
  for (const text of ['SHOW TABLES', 'show tables;', '  SHOW ALL TABLES ']) t.deepEqual(await sandbox.query('org-a', text), [{ name: 'readings' }], text);
  for (const text of ['DESCRIBE readings', 'describe "readings";', 'DESC readings', 'SHOW readings', 'SHOW COLUMNS FROM readings', 'DESCRIBE']) {
    const rows = await sandbox.query('org-a', text);
    t.deepEqual(
      rows.map((r) => r.column_name),
      DOCUMENTED_COLUMNS,
      text,
    );
    t.is(rows.find((r) => r.column_name === 'time_received')?.column_type, 'TIMESTAMP WITH TIME ZONE', text);
  }
  const other = await t.throwsAsync(sandbox.query('org-a', 'DESCRIBE tabular_data'));
  t.regex(other.message, /sql_query: there is no table "tabular_data"; the one table is readings/);
  // Only these whole texts are answered: anything more goes through the sandbox and is refused there.
  await t.throwsAsync(sandbox.query('org-a', 'DESCRIBE readings; DROP TABLE tabular_data'));
  await t.throwsAsync(sandbox.query('org-a', 'SHOW TABLES; SELECT 1'));
  t.is((await sandbox.query('org-a', 'SELECT count(*)::INT AS n FROM readings'))[0].n, 3, 'the data is untouched');
});
