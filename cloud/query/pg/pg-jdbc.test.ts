// The PostgreSQL endpoint with the PostgreSQL JDBC driver (Debian's libpostgresql-jdbc-java) and the default
// URL: clients/PgClientCheck.java is compiled with javac into a temp dir and run against a live endpoint.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PASSWORD_A, SECRET_OF_B, startTestEndpoint, USER_A, type TestEndpoint } from './test-endpoint.js';

const run = promisify(execFile);
const JAR = '/usr/share/java/postgresql.jar';
const source = fileURLToPath(new URL('./clients/PgClientCheck.java', import.meta.url));
let te: TestEndpoint;
let dir: string;
let lines: string[][];

const facts = (kind: string) => lines.filter((l) => l[0] === kind).map((l) => l.slice(1));

test.before(async () => {
  te = await startTestEndpoint();
  dir = mkdtempSync(join(tmpdir(), 'pg-jdbc-'));
  await run('javac', ['-d', dir, '-cp', JAR, source], { timeout: 120_000 });
  const { stdout } = await run(
    'java',
    ['-cp', `${JAR}:${dir}`, 'PgClientCheck', `jdbc:postgresql://127.0.0.1:${te.port}/sensorData`, USER_A, PASSWORD_A, SECRET_OF_B],
    { timeout: 120_000 },
  );
  lines = stdout
    .trim()
    .split('\n')
    .map((l) => l.split('\t'));
});
test.after.always(async () => {
  await te?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the default URL connects and reports PostgreSQL 16', (t) => {
  t.deepEqual(facts('product'), [['PostgreSQL', '16.0']]);
});

test('getTables lists readings, and only readings', (t) => {
  t.deepEqual(facts('table'), [['public', 'readings', 'TABLE']]);
});

test("getColumns lists readings' columns with JDBC types", (t) => {
  const cols = facts('column');
  t.is(cols.length, 15);
  t.deepEqual(cols[0], ['organization_id', 'text', '12', '1']);
  t.deepEqual(
    cols.find((c) => c[0] === 'time_received'),
    ['time_received', 'timestamptz', '93', '11'],
  );
  t.deepEqual(
    cols.find((c) => c[0] === 'tags'),
    ['tags', '_text', '2003', '13'],
  );
  t.deepEqual(
    cols.find((c) => c[0] === 'data'),
    ['data', 'jsonb', '1111', '15'],
  );
});

test("getSchemas, getPrimaryKeys and getTypeInfo answer from the organisation's catalog", (t) => {
  t.deepEqual(
    facts('schema').map((s) => s[0]),
    ['information_schema', 'pg_catalog', 'public'],
  );
  t.deepEqual(facts('primary_keys'), [['0']]);
  t.deepEqual(facts('type_info'), [['true', 'true', 'true']]);
});

test('a PreparedStatement with ? parameters reads timestamps as java.sql.Timestamp, also once prepared server-side', (t) => {
  const rows = facts('row');
  t.is(rows.length, 16, '2 rows x 8 executions');
  for (const r of rows) {
    t.is(r[1], 'java.sql.Timestamp');
    t.is(r[3], 'thermo');
    t.is(r[4], '2');
    t.is(r[5], 'n');
  }
  t.deepEqual(
    rows.filter((r) => r[0] === '7').map((r) => r[2]),
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z'],
  );
});

test('fetch size (a portal with a row limit) returns every row', (t) => {
  t.deepEqual(facts('fetch_size_rows'), [['20']]);
});

test('another organisation and other catalogue entries stay invisible', (t) => {
  t.deepEqual(facts('other_org_rows'), [['0']]);
  const refused = facts('catalog_refused')[0];
  t.is(refused[0], '42501');
  t.regex(refused[1], /pg_catalog\.pg_shadow/);
});
