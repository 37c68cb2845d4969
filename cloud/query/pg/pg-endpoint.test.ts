// The PostgreSQL endpoint tested with the real psql client (Debian's postgresql-client).
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTabularFixture, type TabularFixture } from '../testing/tabular-fixture.js';
import { SqlSandbox } from '../sql/sql-sandbox.js';
import { DatabaseUsers, databaseUsername } from './database-users.js';
import { PgEndpoint } from './pg-endpoint.js';

const run = promisify(execFile);
let fx: TabularFixture;
let users: DatabaseUsers;
let endpoint: PgEndpoint;
let port: number;

test.before(async () => {
  fx = await createTabularFixture();
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  await fx.insert([
    { organization_id: 'org-a', component_name: 'thermo', time_received: new Date(t0), data: { readings: { temperature: 21.5 } } },
    { organization_id: 'org-a', component_name: 'thermo', time_received: new Date(t0 + 1000), data: { readings: { temperature: 22.5 } } },
    { organization_id: 'org-b', component_name: 'thermo', time_received: new Date(t0), data: { readings: { temperature: 99 } } },
  ]);
  users = new DatabaseUsers(fx.store);
  await users.init();
  await users.configure('org-a', 'correct horse battery');
  await users.configure('org-b', 'another password');
  endpoint = new PgEndpoint({ users, sandbox: new SqlSandbox(fx.connect), host: '127.0.0.1', port: 0 });
  port = (await endpoint.listen()).port;
});
test.after.always(async () => {
  await endpoint.close();
  await fx.close();
});

async function psql(user: string, password: string, sql: string, database = 'sensorData') {
  try {
    const { stdout } = await run(
      'psql',
      [`postgresql://${user}@127.0.0.1:${port}/${database}?sslmode=disable`, '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql],
      {
        env: { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '10' },
      },
    );
    return { ok: true, out: stdout.trim() };
  } catch (err) {
    return { ok: false, out: String((err as { stderr?: string }).stderr ?? err) };
  }
}

test.serial('psql connects with the configured user, runs a query, and sees only its organisation', async (t) => {
  const user = databaseUsername('org-a');
  const r = await psql(
    user,
    'correct horse battery',
    'SELECT organization_id, count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg FROM readings GROUP BY 1',
  );
  t.true(r.ok, r.out);
  t.is(r.out, 'org-a|2|22');
  const b = await psql(databaseUsername('org-b'), 'another password', 'SELECT count(*) FROM readings');
  t.is(b.out, '1');
});

test.serial('psql sees JSON, timestamps and NULLs as PostgreSQL prints them', async (t) => {
  const r = await psql(
    databaseUsername('org-a'),
    'correct horse battery',
    `SELECT data, time_received, NULL AS nothing FROM readings ORDER BY time_received LIMIT 1`,
  );
  t.is(r.out, '{"readings":{"temperature":21.5}}|2026-01-01 00:00:00+00|');
});

test.serial('a wrong password, an unknown user and another database are refused', async (t) => {
  const wrong = await psql(databaseUsername('org-a'), 'not the password', 'SELECT 1');
  t.false(wrong.ok);
  t.regex(wrong.out, /password authentication failed/);
  const unknown = await psql(databaseUsername('org-zzz'), 'whatever123', 'SELECT 1');
  t.false(unknown.ok);
  t.regex(unknown.out, /password authentication failed/);
  const crossOrg = await psql(databaseUsername('org-b'), 'correct horse battery', 'SELECT 1');
  t.false(crossOrg.ok);
  const db = await psql(databaseUsername('org-a'), 'correct horse battery', 'SELECT 1', 'postgres');
  t.false(db.ok);
  t.regex(db.out, /database "postgres" does not exist/);
});

test.serial('the sandbox applies over the wire', async (t) => {
  const user = databaseUsername('org-a');
  for (const [sql, re] of [
    ['DROP TABLE tabular_data', /only SELECT statements are allowed/],
    ['SELECT * FROM tabular_data', /only "readings"/],
    [`SELECT * FROM read_text('/etc/passwd')`, /file, network/],
  ] as const) {
    const r = await psql(user, 'correct horse battery', sql);
    t.false(r.ok, sql);
    t.regex(r.out, re);
  }
  const after = await psql(user, 'correct horse battery', 'SELECT count(*) FROM readings');
  t.is(after.out, '2', 'the session is still usable and nothing was dropped');
});

test.serial("psql \\dt, \\dn and \\l list exactly the organisation's relation, schema and database", async (t) => {
  const user = databaseUsername('org-a');
  const dt = await psql(user, 'correct horse battery', '\\dt');
  t.true(dt.ok, dt.out);
  t.is(dt.out, `public|readings|table|${user}`);
  const dn = await psql(user, 'correct horse battery', '\\dn');
  t.is(dn.out, `public|${user}`);
  const l = await psql(user, 'correct horse battery', '\\l');
  t.true(l.ok, l.out);
  t.is(l.out.split('\n').length, 1, 'one database');
  t.regex(l.out, new RegExp(`^sensorData\\|${user}\\|UTF8\\|`));
});

test.serial('psql \\df and \\df+ answer with no functions (the organisation defines none), and \\df pg_catalog.* shows none of the engine', async (t) => {
  const user = databaseUsername('org-a');
  for (const cmd of ['\\df', '\\df+', '\\df pg_catalog.*', '\\df read*']) {
    const r = await psql(user, 'correct horse battery', cmd);
    t.true(r.ok, `${cmd}: ${r.out}`);
    t.is(r.out, '', cmd);
  }
});

test.serial('psql \\d readings describes its columns with PostgreSQL type names', async (t) => {
  const r = await psql(databaseUsername('org-a'), 'correct horse battery', '\\d readings');
  t.true(r.ok, r.out);
  const columns = Object.fromEntries(
    r.out
      .split('\n')
      .filter((l) => l.includes('|'))
      .map((l) => l.split('|').slice(0, 2)),
  );
  t.is(columns.organization_id, 'text');
  t.is(columns.time_received, 'timestamp with time zone');
  t.is(columns.tags, 'text[]');
  t.is(columns.data, 'jsonb');
  t.is(Object.keys(columns).length, 15);
});

test.serial('psql: count(*) is headed count, and other catalogue entries and other organisations stay invisible', async (t) => {
  const user = databaseUsername('org-a');
  const { stdout } = await run('psql', [`postgresql://${user}@127.0.0.1:${port}/sensorData?sslmode=disable`, '-X', '-c', 'SELECT count(*) FROM readings'], {
    env: { ...process.env, PGPASSWORD: 'correct horse battery' },
  });
  t.regex(stdout, /^\s*count\s*\n/);
  const classes = await psql(user, 'correct horse battery', 'SELECT relname FROM pg_catalog.pg_class ORDER BY 1');
  t.is(classes.out, 'readings');
  const tables = await psql(user, 'correct horse battery', 'SELECT table_schema, table_name FROM information_schema.tables');
  t.is(tables.out, 'public|readings');
  for (const [sql, re] of [
    ['SELECT * FROM pg_catalog.pg_stat_activity', /pg_catalog\.pg_stat_activity: catalog queries may read only/],
    ['SELECT * FROM duckdb_tables()', /duckdb_tables\(\) is refused/],
    ['SELECT * FROM information_schema.tables, tabular_data', /table tabular_data: catalog queries may read only/],
    ['SELECT * FROM pg_catalog.pg_class c JOIN readings r ON true', /qualified names are refused/],
  ] as const) {
    const r = await psql(user, 'correct horse battery', sql);
    t.false(r.ok, sql);
    t.regex(r.out, re, sql);
  }
  const b = await psql(user, 'correct horse battery', "SELECT count(*) FROM readings WHERE organization_id = 'org-b'");
  t.is(b.out, '0');
});

test.serial('resetting the password replaces the old one; only a SCRAM verifier is stored', async (t) => {
  await users.configure('org-b', 'brand new password');
  t.false((await psql(databaseUsername('org-b'), 'another password', 'SELECT 1')).ok);
  t.is((await psql(databaseUsername('org-b'), 'brand new password', 'SELECT 1')).out, '1');
  const rows = await fx.store.query(`SELECT * FROM query_database_users WHERE organization_id = 'org-b'`);
  t.is(rows.length, 1);
  t.false(JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v)).includes('brand new password'));
  t.is(rows[0].scram_iterations, 4096);
});

test.serial('passwords are checked for length and control characters', async (t) => {
  await t.throwsAsync(users.configure('org-a', 'short'), { message: /password: must be at least 8 characters/ });
  await t.throwsAsync(users.configure('org-a', 'bad\npassword'), { message: /password: must not contain control characters/ });
  await t.throwsAsync(users.configure('', 'long enough pw'), { message: /organization_id: must not be empty/ });
  t.true(await users.has('org-a'));
  t.false(await users.has('org-c'));
});
