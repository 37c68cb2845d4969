// The hostile-query inputs: attempts to escape the SQL sandbox, each with what its refusal must say. Run
// by hostile-queries.test.ts (embedded) and cloud/query/sealed/scale-out-hostile.test.ts (both modes give
// the same errors).
export const OTHER_TABLE = /only "readings" and your own CTEs/;
export const NOT_SELECT = /only SELECT statements are allowed/;
export const FILES = /file, network and dynamic-SQL access/;
export const CATALOGUE = /catalogue functions are not allowed|only "readings"|SHOW, DESCRIBE/;
export const SETTINGS = /settings and session functions/;
export const LIMITS = /time limit|row limit|byte limit/;

export const hostile: [string, string, RegExp][] = [
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
