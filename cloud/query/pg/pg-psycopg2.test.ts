// The PostgreSQL endpoint with psycopg2 (Debian's python3-psycopg2): clients/psycopg2_check.py connects,
// runs %s-parameter queries, a server-side cursor and a cancel, and prints what it saw as JSON.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PASSWORD_A, SECRET_OF_B, startTestEndpoint, USER_A, type TestEndpoint } from './test-endpoint.js';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./clients/psycopg2_check.py', import.meta.url));
let te: TestEndpoint;
let seen: Record<string, unknown>;

test.before(async () => {
  te = await startTestEndpoint();
  const { stdout } = await run('/usr/bin/python3', [script], {
    env: { ...process.env, PGPORT: String(te.port), PGUSER: USER_A, PGPASSWORD: PASSWORD_A, SECRET: SECRET_OF_B },
    timeout: 120_000,
  });
  seen = JSON.parse(stdout) as Record<string, unknown>;
});
test.after.always(() => te?.close());

test('psycopg2 connects: the server reports its encoding and version', (t) => {
  t.is(seen.encoding, 'UTF8');
  t.is(seen.server_version, 160000);
});

test('%s parameters work and count(*) is named count', (t) => {
  t.deepEqual(seen.params, { rows: [['thermo', 2]], columns: ['component_name', 'count'] });
});

test('timestamptz, jsonb and text[] arrive as datetime, dict and list', (t) => {
  t.deepEqual(seen.types, { time: '2026-01-01T00:00:00+00:00', tz: 'UTC', data: { readings: { temperature: 21.5 } }, tags: ['hot', 'x y'] });
});

test('a server-side cursor fetches all rows in batches', (t) => {
  t.deepEqual(
    seen.server_side,
    Array.from({ length: 50 }, (_, i) => i),
  );
});

test('cancel interrupts the running query with 57014 and the connection stays usable', (t) => {
  t.like(seen.cancel as object, { code: '57014' });
  t.regex((seen.cancel as { message: string }).message, /canceling statement due to user request/);
  t.is(seen.after_cancel, 1);
});

test('another organisation and other catalogue entries stay invisible', (t) => {
  t.is(seen.other_org_rows, 0);
  t.deepEqual(seen.tables, ['readings']);
  t.like(seen.catalog_refused as object, { code: '42501' });
});
