// The hostile-query suite: every attempt to escape the sandbox is refused with INVALID_ARGUMENT or
// PERMISSION_DENIED and a message naming why, and the database is unchanged afterwards.
import test from 'ava';
import { existsSync } from 'node:fs';
import { status } from '@grpc/grpc-js';
import { hostile } from './hostile-inputs.js';
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
