// The hostile-query suite: every attempt to escape the sandbox is refused with INVALID_ARGUMENT or
// PERMISSION_DENIED and a message naming why, and the database is unchanged afterwards.
import test from 'ava';
import { existsSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { SqlSandbox } from './sql-sandbox.js';
import { createTabularFixture, type TabularFixture } from '../testing/tabular-fixture.js';
import { StatusError } from '../../../core/serving/status-error.js';

let fx: TabularFixture;
let sandbox: SqlSandbox;

test.before(async () => {
  fx = await createTabularFixture();
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const rows = [];
  for (let i = 0; i < 200; i++) {
    rows.push({ organization_id: i % 2 ? 'org-a' : 'org-b', time_received: new Date(t0 + i * 1000), data: { readings: { v: i } } });
  }
  await fx.insert(rows);
  sandbox = new SqlSandbox(fx.connect, { timeoutMs: 2000, maxRows: 1000, maxBytes: 1_000_000 });
});
test.after.always(() => fx.close());

const OTHER_TABLE = /only "readings" and your own CTEs/;
const NOT_SELECT = /only SELECT statements are allowed/;
const FILES = /file, network and dynamic-SQL access/;
const CATALOGUE = /catalogue functions are not allowed|only "readings"|SHOW, DESCRIBE/;
const SETTINGS = /settings and session functions/;
const LIMITS = /time limit|row limit|byte limit/;

const hostile: [string, string, RegExp][] = [
  // Another organisation's data.
  ['base table', 'SELECT * FROM tabular_data', OTHER_TABLE],
  ['qualified base table', 'SELECT * FROM main.tabular_data', OTHER_TABLE],
  ['catalogue-qualified table', 'SELECT * FROM memory.main.tabular_data', OTHER_TABLE],
  ['case and quoting', 'SELECT * FROM "TABULAR_DATA"', OTHER_TABLE],
  ['comment obfuscation', 'SELECT * FROM/**/tabular_data --', OTHER_TABLE],
  ['shadowing CTE named readings', 'WITH readings AS (SELECT * FROM tabular_data) SELECT * FROM readings', OTHER_TABLE],
  ['self-referencing CTE reaching the base table', 'WITH tabular_data AS (SELECT * FROM tabular_data) SELECT * FROM tabular_data', OTHER_TABLE],
  ['union with base table', `SELECT organization_id FROM readings UNION ALL SELECT organization_id FROM tabular_data`, OTHER_TABLE],
  ['subquery in WHERE', `SELECT * FROM readings WHERE data IN (SELECT data FROM tabular_data)`, OTHER_TABLE],
  ['the temp view by its schema', 'SELECT * FROM temp.readings', OTHER_TABLE],
  ['dynamic SQL through query()', `SELECT * FROM query('SELECT * FROM tabular_data')`, FILES],
  ['time travel', 'SELECT * FROM readings AT (VERSION => 1)', /time travel|AT/],
  // Files and network.
  ['read_csv', `SELECT * FROM read_csv('/etc/passwd')`, FILES],
  ['read_text', `SELECT * FROM read_text('/etc/passwd')`, FILES],
  ['read_blob', `SELECT * FROM read_blob('/etc/hostname')`, FILES],
  ['glob', `SELECT * FROM glob('/*')`, FILES],
  ['read_parquet over http', `SELECT * FROM read_parquet('http://127.0.0.1:1/x.parquet')`, FILES],
  ['replacement scan of a file name', `SELECT * FROM '/etc/passwd'`, OTHER_TABLE],
  ['COPY to a file', `COPY (SELECT * FROM readings) TO '/tmp/q7-hostile.csv'`, NOT_SELECT],
  ['EXPORT DATABASE', `EXPORT DATABASE '/tmp/q7-hostile-export'`, NOT_SELECT],
  ['ATTACH', `ATTACH '/tmp/q7-hostile.db' AS evil`, NOT_SELECT],
  // DDL and DML.
  ['CREATE TABLE', 'CREATE TABLE evil AS SELECT 1', NOT_SELECT],
  ['CREATE MACRO', 'CREATE MACRO evil() AS 1', NOT_SELECT],
  ['DROP TABLE', 'DROP TABLE tabular_data', NOT_SELECT],
  ['INSERT', `INSERT INTO tabular_data (organization_id) VALUES ('org-a')`, NOT_SELECT],
  ['UPDATE', `UPDATE tabular_data SET organization_id = 'org-a'`, NOT_SELECT],
  ['DELETE', 'DELETE FROM tabular_data', NOT_SELECT],
  ['stacked statement', 'SELECT 1; DROP TABLE tabular_data', NOT_SELECT],
  // Extensions and settings.
  ['INSTALL', 'INSTALL httpfs', NOT_SELECT],
  ['LOAD', 'LOAD httpfs', NOT_SELECT],
  ['SET', 'SET enable_external_access = true', NOT_SELECT],
  ['RESET', 'RESET memory_limit', NOT_SELECT],
  ['PRAGMA', 'PRAGMA database_list', NOT_SELECT],
  ['CALL', 'CALL pragma_version()', NOT_SELECT],
  ['current_setting', `SELECT current_setting('threads')`, SETTINGS],
  ['getvariable', `SELECT getvariable('x')`, SETTINGS],
  ['version', 'SELECT version()', SETTINGS],
  ['setting hidden in a lambda', `SELECT list_transform([1], x -> current_setting('threads'))`, SETTINGS],
  // Catalogue reads.
  ['duckdb_tables()', 'SELECT * FROM duckdb_tables()', CATALOGUE],
  ['duckdb_settings()', 'SELECT * FROM duckdb_settings()', CATALOGUE],
  ['information_schema', 'SELECT * FROM information_schema.tables', CATALOGUE],
  ['sqlite_master', 'SELECT * FROM sqlite_master', CATALOGUE],
  ['pg_catalog', 'SELECT * FROM pg_catalog.pg_class', CATALOGUE],
  ['DESCRIBE', 'DESCRIBE tabular_data', /.*/],
  // SHOW TABLES alone is answered read-only from the schema (sql-sandbox.test.ts); joined to another statement it is not.
  ['SHOW TABLES then another statement', 'SHOW TABLES; SELECT 1', /.*/],
  ['SHOW of a setting', 'SHOW memory_limit', /.*/],
  ['SUMMARIZE', 'SUMMARIZE tabular_data', /.*/],
  ['pragma table function', `SELECT * FROM pragma_table_info('tabular_data')`, CATALOGUE],
  ['EXPLAIN', 'EXPLAIN SELECT * FROM tabular_data', NOT_SELECT],
  // Sleeps, runaway work and huge results.
  ['pg_sleep', 'SELECT pg_sleep(100)', /sleeping is not allowed/],
  ['sleep_ms', 'SELECT sleep_ms(100000)', /sleeping is not allowed/],
  ['endless count', 'SELECT count(*) FROM range(1000000000000)', LIMITS],
  ['huge cross join', 'SELECT count(*) FROM readings a, readings b, readings c, readings d, readings e', LIMITS],
  ['huge result', 'SELECT * FROM readings a, readings b', LIMITS],
  ['huge single value', `SELECT repeat('x', 5000000) AS big`, /unbounded value/],
  ['huge list in one call', 'SELECT len(range(3000000000)) AS n', /unbounded value/],
  ['huge padding in one call', `SELECT lpad('x', 2000000000, 'y') AS p`, /unbounded value/],
  ['huge result of small rows', `SELECT x FROM range(5000000) t(x)`, LIMITS],
  ['recursive CTE without end', 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r', LIMITS],
  ['parameters', 'SELECT $1', /parameters are not supported/],
  ['PIVOT inside a SELECT', 'SELECT * FROM (PIVOT tabular_data ON component_name USING count(*))', /cannot check/],
];

for (const [name, sql, reason] of hostile) {
  test(`refused: ${name}`, async (t) => {
    const err = await t.throwsAsync(sandbox.query('org-a', sql), { instanceOf: StatusError }, sql);
    t.true(
      [status.INVALID_ARGUMENT, status.PERMISSION_DENIED, status.DEADLINE_EXCEEDED, status.RESOURCE_EXHAUSTED].includes(err!.code),
      `${sql}: code ${err!.code}`,
    );
    t.regex(err!.message, /^sql_query: /);
    t.regex(err!.message, reason);
  });
}

test('the suite has at least 25 attempts', (t) => {
  t.true(hostile.length >= 25);
});

test('filtering on another organisation finds nothing', async (t) => {
  const sandbox = new SqlSandbox(fx.connect);
  t.deepEqual(await sandbox.query('org-a', `SELECT count(*) AS n FROM readings WHERE organization_id = 'org-b'`), [{ n: 0 }]);
  t.deepEqual(await sandbox.query(`org-a' OR '1'='1`, `SELECT count(*) AS n FROM readings`), [{ n: 0 }]);
});

test.after('nothing was changed or written by the hostile queries', async (t) => {
  const conn = await fx.connect();
  const reader = await conn.runAndReadAll(`SELECT count(*) AS n, count(DISTINCT organization_id) AS orgs FROM tabular_data`);
  t.deepEqual(reader.getRowObjectsJS(), [{ n: 200n, orgs: 2n }]);
  const tables = await conn.runAndReadAll(`SELECT count(*) AS n FROM duckdb_tables() WHERE table_name ILIKE '%evil%'`);
  t.deepEqual(tables.getRowObjectsJS(), [{ n: 0n }]);
  const macros = await conn.runAndReadAll(`SELECT count(*) AS n FROM duckdb_functions() WHERE function_name = 'evil'`);
  t.deepEqual(macros.getRowObjectsJS(), [{ n: 0n }]);
  conn.closeSync();
  t.false(existsSync('/tmp/q7-hostile.csv'));
  t.false(existsSync('/tmp/q7-hostile.db'));
  t.false(existsSync('/tmp/q7-hostile-export'));
});
