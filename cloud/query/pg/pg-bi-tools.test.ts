// The connect-time and browse-time catalog queries of BI tools and SQL clients, in the form DBeaver, Metabase,
// Grafana and pgcli send them (written here from those tools' catalog code; the tools themselves are not on
// this machine). Each must answer over the extended protocol and show exactly the organisation's relation.
import test from 'ava';
import pg from 'pg';
import { PASSWORD_A, startTestEndpoint, USER_A, type TestEndpoint } from './test-endpoint.js';

let te: TestEndpoint;
let client: pg.Client;

test.before(async () => {
  te = await startTestEndpoint();
  client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  await client.connect();
});
test.after.always(async () => {
  await client?.end().catch(() => undefined);
  await te?.close();
});

const rows = async (sql: string, values: unknown[] = []) => (await client.query(sql, values)).rows as Record<string, unknown>[];

test.serial('DBeaver: current schema and user', async (t) => {
  const r = await rows(`SELECT current_schema(),session_user`, []);
  t.deepEqual(r, [{ current_schema: 'public', '?column?': USER_A }]);
});

test.serial('DBeaver: schemas', async (t) => {
  const r = await rows(
    `SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass ORDER BY nspname`,
    [],
  );
  t.deepEqual(
    r.map((x) => x.nspname),
    ['information_schema', 'pg_catalog', 'public'],
  );
});

test.serial('DBeaver: database', async (t) => {
  const r = await rows(`SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datname=$1`, ['sensorData']);
  t.is(r.length, 1);
  t.is(r[0].datname, 'sensorData');
});

test.serial('DBeaver: a setting', async (t) => {
  const r = await rows(`select * from pg_catalog.pg_settings where name=$1`, ['standard_conforming_strings']);
  t.deepEqual(
    r.map((x) => [x.name, x.setting]),
    [['standard_conforming_strings', 'on']],
  );
});

test.serial('DBeaver: tables of a schema', async (t) => {
  const r = await rows(
    `SELECT c.oid,c.*,t.relname as tabrelname,rt.relnamespace as refnamespace,d.description, case when c.relpartbound is not null then pg_get_expr(c.relpartbound, c.oid, true) end as partition_expr FROM pg_catalog.pg_class c LEFT OUTER JOIN pg_catalog.pg_class t ON t.oid=c.reltoastrelid LEFT OUTER JOIN pg_catalog.pg_class rt ON rt.oid=c.reloftype LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass WHERE c.relnamespace=$1 AND c.relkind not in ('i','I','c')`,
    [2200],
  );
  t.deepEqual(
    r.map((x) => x.relname),
    ['readings'],
  );
});

test.serial('DBeaver: columns of a table', async (t) => {
  const r = await rows(
    `SELECT c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description,dep.objid FROM pg_catalog.pg_attribute a INNER JOIN pg_catalog.pg_class c ON (a.attrelid=c.oid) LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum) LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid) LEFT OUTER JOIN pg_depend dep on dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid WHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.oid=$1 ORDER BY a.attnum`,
    [16400],
  );
  t.is(r.length, 15);
  t.deepEqual(new Set(r.map((x) => x.relname)), new Set(['readings']));
});

test.serial('DBeaver: data types', async (t) => {
  const r = await rows(
    `SELECT t.oid,t.*,c.relkind,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name, d.description FROM pg_catalog.pg_type t LEFT OUTER JOIN pg_catalog.pg_type et ON et.oid=t.typelem LEFT OUTER JOIN pg_catalog.pg_class c ON c.oid=t.typrelid LEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid WHERE t.typname IS NOT NULL AND (c.relkind IS NULL OR c.relkind = 'c') AND (et.typcategory IS NULL OR et.typcategory <> 'C')`,
    [],
  );
  t.true(r.some((x) => x.typname === 'jsonb'));
  t.true(r.some((x) => x.typname === 'timestamptz'));
});

test.serial('Metabase: schemas', async (t) => {
  const r = await rows(
    `SELECT nspname AS "TABLE_SCHEM", NULL AS "TABLE_CATALOG" FROM pg_catalog.pg_namespace WHERE nspname <> 'pg_toast' AND (nspname !~ '^pg_temp_'  OR nspname = (pg_catalog.current_schemas(true))[1]) AND (nspname !~ '^pg_toast_temp_'  OR nspname = replace((pg_catalog.current_schemas(true))[1], 'pg_temp_', 'pg_toast_temp_')) ORDER BY "TABLE_SCHEM"`,
    [],
  );
  t.deepEqual(
    r.map((x) => x.TABLE_SCHEM),
    ['information_schema', 'pg_catalog', 'public'],
  );
});

test.serial('Metabase: tables', async (t) => {
  const r = await rows(
    `SELECT n.nspname AS schema, c.relname AS name, CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'PARTITIONED TABLE' WHEN 'v' THEN 'VIEW' WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE NULL END AS type, d.description AS description, stat.n_live_tup AS estimated_row_count FROM pg_catalog.pg_class AS c INNER JOIN pg_catalog.pg_namespace AS n ON c.relnamespace = n.oid LEFT JOIN pg_catalog.pg_description AS d ON (c.oid = d.objoid AND d.objsubid = 0 AND d.classoid = 'pg_class'::regclass) LEFT JOIN pg_stat_user_tables AS stat ON (n.nspname = stat.schemaname AND c.relname = stat.relname) WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'f', 'm') AND n.nspname !~ '^information_schema|catalog_history|pg_' AND has_schema_privilege(n.nspname, 'USAGE') AND (has_table_privilege(c.oid, 'SELECT') OR has_any_column_privilege(c.oid, 'SELECT')) ORDER BY type, schema, name`,
    [],
  );
  t.deepEqual(
    r.map((x) => [x.schema, x.name, x.type]),
    [['public', 'readings', 'TABLE']],
  );
});

test.serial('Grafana: table list on the search path', async (t) => {
  const r = await rows(
    `SELECT quote_ident(table_name) AS "table" FROM information_schema.tables WHERE quote_ident(table_schema) NOT IN ('information_schema', 'pg_catalog', '_timescaledb_cache', '_timescaledb_catalog', '_timescaledb_internal', '_timescaledb_config', 'timescaledb_information', 'timescaledb_experimental') AND table_type = 'BASE TABLE' AND quote_ident(table_schema) IN (SELECT CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END FROM generate_series(array_lower(string_to_array(current_setting('search_path'),','),1), array_upper(string_to_array(current_setting('search_path'),','),1)) as i, string_to_array(current_setting('search_path'),',') s)`,
    [],
  );
  t.deepEqual(r, [{ table: 'readings' }]);
});

test.serial('Grafana: columns', async (t) => {
  const r = await rows(`SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'readings' ORDER BY column_name`, []);
  t.is(r.length, 15);
  t.deepEqual(
    r.find((x) => x.column_name === 'data'),
    { column_name: 'data', data_type: 'jsonb' },
  );
});

test.serial('Grafana: server version', async (t) => {
  const r = await rows(`SELECT current_setting('server_version_num')::int/100 as version`, []);
  t.deepEqual(r, [{ version: 1600 }]);
});

test.serial('pgcli: tables', async (t) => {
  const r = await rows(
    `SELECT n.nspname schema_name, c.relname table_name FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = ANY(ARRAY['r','p','f']) ORDER BY 1,2`,
    [],
  );
  t.deepEqual(r, [{ schema_name: 'public', table_name: 'readings' }]);
});

test.serial('pgcli: columns', async (t) => {
  const r = await rows(
    `SELECT nsp.nspname schema_name, cls.relname table_name, att.attname column_name, att.atttypid::regtype::text type_name, att.atthasdef AS has_default, pg_catalog.pg_get_expr(def.adbin, def.adrelid, true) as default FROM pg_catalog.pg_attribute att INNER JOIN pg_catalog.pg_class cls ON att.attrelid = cls.oid INNER JOIN pg_catalog.pg_namespace nsp ON cls.relnamespace = nsp.oid LEFT OUTER JOIN pg_attrdef def ON def.adrelid = att.attrelid AND def.adnum = att.attnum WHERE cls.relkind = ANY(ARRAY['r','p','f']) AND NOT att.attisdropped AND att.attnum > 0 ORDER BY 1, 2, att.attnum`,
    [],
  );
  t.is(r.length, 15);
  t.deepEqual(r[10], {
    schema_name: 'public',
    table_name: 'readings',
    column_name: 'time_received',
    type_name: 'timestamp with time zone',
    has_default: false,
    default: null,
  });
});

test.serial('pgcli: databases', async (t) => {
  const r = await rows(`SELECT d.datname FROM pg_catalog.pg_database d ORDER BY 1`, []);
  t.deepEqual(r, [{ datname: 'sensorData' }]);
});

test.serial('pgcli: schemas', async (t) => {
  const r = await rows(`SELECT nspname FROM pg_catalog.pg_namespace ORDER BY 1`, []);
  t.deepEqual(
    r.map((x) => x.nspname),
    ['information_schema', 'pg_catalog', 'public'],
  );
});

test.serial('pgcli: version', async (t) => {
  const r = await rows(`SELECT pg_catalog.version()`, []);
  t.regex(String(r[0].version), /^PostgreSQL 16\.0 /);
});

test.serial('the catalog is read-only and other catalogue relations are refused', async (t) => {
  for (const sql of [
    'SELECT * FROM pg_catalog.pg_stat_activity',
    'SELECT * FROM pg_catalog.pg_shadow',
    'SELECT * FROM information_schema.role_table_grants',
    'SELECT * FROM duckdb_databases()',
  ]) {
    const err = (await t.throwsAsync(client.query(sql))) as Error & { code?: string };
    t.is(err.code, '42501', sql);
  }
  const del = (await t.throwsAsync(client.query('DELETE FROM pg_catalog.pg_class'))) as Error & { code?: string };
  t.regex(del.message, /only SELECT statements are allowed; a DELETE statement is refused/);
  t.deepEqual(
    (await rows('SELECT relname FROM pg_catalog.pg_class')).map((x) => x.relname),
    ['readings'],
  );
});
