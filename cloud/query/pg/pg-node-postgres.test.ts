// The PostgreSQL endpoint with node-postgres (npm `pg`), which uses the extended query protocol for
// every parameterised query: $1 parameters, named prepared statements, int8, jsonb, arrays, timestamps.
import test from 'ava';
import pg from 'pg';
import { PASSWORD_A, SECRET_OF_B, startTestEndpoint, USER_A, type TestEndpoint } from './test-endpoint.js';

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

test.serial('$1 parameters bind in the extended protocol and count(*) is named count', async (t) => {
  const r = await client.query('SELECT component_name, count(*) FROM readings WHERE component_name = $1 GROUP BY 1', ['thermo']);
  t.deepEqual(r.rows, [{ component_name: 'thermo', count: '2' }]);
  t.deepEqual(
    r.fields.map((f) => [f.name, f.dataTypeID]),
    [
      ['component_name', 25],
      ['count', 20],
    ],
  );
});

test.serial('a named prepared statement is parsed once and executed with different parameters', async (t) => {
  const q = (limit: number) => ({
    name: 'recent',
    text: 'SELECT time_received, tags FROM readings WHERE component_name = $1 ORDER BY time_received LIMIT $2',
    values: ['thermo', limit],
  });
  const one = await client.query(q(1));
  t.is(one.rows.length, 1);
  t.true(one.rows[0].time_received instanceof Date);
  t.is((one.rows[0].time_received as Date).toISOString(), '2026-01-01T00:00:00.000Z');
  t.deepEqual(one.rows[0].tags, ['hot', 'x y']);
  const two = await client.query(q(5));
  t.is(two.rows.length, 2);
  // Parsing the same name with other text is the client's error, as on PostgreSQL.
  const err = await t.throwsAsync(client.query({ name: 'recent', text: 'SELECT 1', values: [] }));
  t.truthy(err);
});

test.serial('int8 keeps all 64 bits and jsonb arrives parsed', async (t) => {
  const r = await client.query(
    'SELECT $1::BIGINT AS big, 9007199254740993::BIGINT AS lit, data FROM readings WHERE component_name = $2 ORDER BY time_received LIMIT 1',
    ['9007199254740993', 'thermo'],
  );
  t.is(r.rows[0].big, '9007199254740993');
  t.is(r.rows[0].lit, '9007199254740993');
  t.deepEqual(r.rows[0].data, { readings: { temperature: 21.5 } });
  t.deepEqual(
    r.fields.map((f) => f.dataTypeID),
    [20, 20, 3802],
  );
});

test.serial('types: bool, numeric, float, uuid, bytea, interval, date and NULL', async (t) => {
  const r = await client.query(`SELECT true AS b, 1.50::DECIMAL(10,2) AS n, 0.1::DOUBLE AS f, 1.1::FLOAT AS f4,
    '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID AS u, '\\xAB\\x01'::BLOB AS bytes, INTERVAL '1 day 2 hours' AS i, DATE '2026-02-03' AS d, NULL::VARCHAR AS nothing`);
  const row = r.rows[0];
  t.is(row.b, true);
  t.is(row.n, '1.50');
  t.is(row.f, 0.1);
  t.is(row.f4, 1.1);
  t.is(row.u, '6ba7b810-9dad-11d1-80b4-00c04fd430c8');
  t.deepEqual(row.bytes, Buffer.from([0xab, 0x01]));
  t.deepEqual({ ...row.i }, { days: 1, hours: 2 });
  t.true(row.d instanceof Date);
  t.is(row.nothing, null);
  t.deepEqual(
    r.fields.map((f) => f.dataTypeID),
    [16, 1700, 701, 700, 2950, 17, 1186, 1082, 25],
  );
});

test.serial('an error in the extended protocol is reported and the connection stays usable', async (t) => {
  const err = (await t.throwsAsync(client.query('SELECT * FROM tabular_data WHERE organization_id = $1', ['org-b']))) as Error & { code?: string };
  t.is(err.code, '42501');
  t.regex(err.message, /only "readings"/);
  const bad = (await t.throwsAsync(client.query('SELECT nope FROM readings WHERE component_name = $1', ['x']))) as Error & { code?: string };
  t.regex(bad.message, /nope/);
  const ok = await client.query('SELECT count(*) AS n FROM readings WHERE component_name = $1', ['hygro']);
  t.is(ok.rows[0].n, '1');
});

test.serial("another organisation's data and other catalogue entries stay invisible", async (t) => {
  const mine = await client.query('SELECT DISTINCT organization_id FROM readings');
  t.deepEqual(mine.rows, [{ organization_id: 'org-a' }]);
  const secret = await client.query('SELECT count(*) AS n FROM readings WHERE component_name = $1', [SECRET_OF_B]);
  t.is(secret.rows[0].n, '0');
  const rels = await client.query('SELECT c.relname, n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace');
  t.deepEqual(rels.rows, [{ relname: 'readings', nspname: 'public' }]);
  const roles = await client.query('SELECT rolname FROM pg_catalog.pg_roles');
  t.deepEqual(roles.rows, [{ rolname: USER_A }]);
  const err = (await t.throwsAsync(client.query('SELECT * FROM duckdb_settings()'))) as Error & { code?: string };
  t.is(err.code, '42501');
});

test.serial('session statements: SET, SHOW, search_path limited to the schema, transactions, and the rest refused', async (t) => {
  await client.query('SET application_name = $$bi-tool$$');
  t.is((await client.query('SHOW application_name')).rows[0].application_name, 'bi-tool');
  await client.query('SET search_path TO public');
  const sp = (await t.throwsAsync(client.query('SET search_path TO other_org'))) as Error & { code?: string };
  t.regex(sp.message, /search_path: "other_org" is not accepted \(only schema "public"/);
  const work = (await t.throwsAsync(client.query('SET work_mem = 1000000'))) as Error & { code?: string };
  t.regex(work.message, /SET work_mem: only application_name, extra_float_digits/);
  await client.query('BEGIN');
  t.is((await client.query('SELECT count(*) AS n FROM readings')).rows[0].n, '3');
  await client.query('COMMIT');
  const rw = (await t.throwsAsync(client.query('BEGIN READ WRITE'))) as Error & { code?: string };
  t.regex(rw.message, /read-only/);
  const drop = (await t.throwsAsync(client.query('DROP TABLE readings'))) as Error & { code?: string };
  t.regex(drop.message, /only SELECT statements are allowed; a DROP statement is refused/);
});

test.serial('a portal suspended by a row limit resumes where it stopped; a statement in between closes it with 55000', async (t) => {
  // Cursors are portals too: FETCH n is Execute with a row limit.
  await client.query('BEGIN');
  await client.query('DECLARE c CURSOR FOR SELECT x FROM range(10) r(x)');
  const first = await client.query('FETCH 4 FROM c');
  t.deepEqual(
    first.rows.map((r) => Number(r.x)),
    [0, 1, 2, 3],
  );
  const next = await client.query('FETCH FORWARD 3 FROM c');
  t.deepEqual(
    next.rows.map((r) => Number(r.x)),
    [4, 5, 6],
  );
  await client.query('SELECT 1');
  const err = (await t.throwsAsync(client.query('FETCH ALL FROM c'))) as Error & { code?: string };
  t.is(err.code, '55000');
  t.regex(err.message, /cursor "c" was closed because a later statement ran on the same connection/);
  await client.query('ROLLBACK');
  await client.query('BEGIN');
  await client.query('DECLARE d CURSOR FOR SELECT x FROM range(5) r(x)');
  t.deepEqual(
    (await client.query('FETCH ALL FROM d')).rows.map((r) => Number(r.x)),
    [0, 1, 2, 3, 4],
  );
  t.is((await client.query('FETCH ALL FROM d')).rowCount, 0);
  await client.query('COMMIT');
  const gone = (await t.throwsAsync(client.query('FETCH ALL FROM d'))) as Error & { code?: string };
  t.regex(gone.message, /cursor "d" does not exist/);
});

test.serial('a named statement runs materialized after a small result; results that grow, suspend or shrink stay whole and in order', async (t) => {
  // The endpoint materializes a statement whose last result had at most 2048 rows (one hop instead of three),
  // wrapped in LIMIT 2049; a run that finds the extra row streams instead. Each run here follows the other
  // kind of run before it.
  const downFrom = (n: number, rows?: number) => ({
    name: 'down-from',
    text: 'SELECT x FROM range($1::BIGINT) r(x) ORDER BY x DESC',
    values: [n],
    ...(rows ? { rows } : {}),
  });
  const xs = (r: pg.QueryResult) => r.rows.map((row: { x: string }) => Number(row.x));
  const descending = (n: number) => Array.from({ length: n }, (_, i) => n - 1 - i);
  t.deepEqual(xs(await client.query(downFrom(3))), descending(3)); // streamed: the statement has no history yet
  t.deepEqual(xs(await client.query(downFrom(5000))), descending(5000)); // the bounded run finds it large: streamed
  t.deepEqual(xs(await client.query(downFrom(4))), descending(4)); // streamed (the last was large), found small
  // Materialized, exactly one vector, read 1000 rows per Execute: the portal suspends inside the chunk.
  t.deepEqual(xs(await client.query(downFrom(2048, 1000))), descending(2048));
  // One row over: streamed after the bounded run, suspending and resuming across chunk boundaries.
  t.deepEqual(xs(await client.query(downFrom(2049, 1000))), descending(2049));
  const empty = await client.query(downFrom(0)); // streamed (the last was large), and empty
  t.is(empty.rowCount, 0);
  t.deepEqual(xs(await client.query(downFrom(2))), descending(2)); // materialized after an empty result
});

test.serial("a materialized run keeps the statement's column names, and a trailing semicolon or comment", async (t) => {
  for (const text of ['SELECT x, x, x + 1 FROM range($1::BIGINT) r(x) ORDER BY x ;  ', 'SELECT x, x, x + 1 FROM range($1::BIGINT) r(x) ORDER BY x -- twice']) {
    const name = `names-${text.length}`;
    for (const n of [2, 3]) {
      // The first run streams; the second is materialized, through the LIMIT wrapper.
      const r = await client.query({ name, text, values: [n], rowMode: 'array' });
      t.deepEqual(
        r.fields.map((f) => f.name),
        ['x', 'x', '?column?'],
      );
      t.deepEqual(
        r.rows.map((row: string[]) => row.map(Number)),
        Array.from({ length: n }, (_, i) => [i, i, i + 1]),
      );
    }
  }
});

test.serial('array parameters: text[] and int8[] bind with = ANY and in a list function', async (t) => {
  const r = await client.query('SELECT count(*) AS n FROM readings WHERE component_name = ANY($1::TEXT[])', [['thermo', 'hygro', 'x y']]);
  t.deepEqual(r.rows, [{ n: '3' }]);
  const typed = await client.query({ name: 'by-names', text: 'SELECT count(*) AS n FROM readings WHERE component_name = ANY($1)', values: [['hygro']] });
  t.deepEqual(typed.rows, [{ n: '1' }]);
  const ints = await client.query('SELECT list_sum($1::BIGINT[]) AS s, len($1::BIGINT[]) AS l', [[9007199254740993n.toString(), '-3', null]]);
  t.deepEqual(ints.rows, [{ s: '9007199254740990', l: '3' }]);
  // Another organisation's rows stay out of reach whatever the array holds.
  const other = await client.query('SELECT count(*) AS n FROM readings WHERE component_name = ANY($1::TEXT[])', [[SECRET_OF_B]]);
  t.deepEqual(other.rows, [{ n: '0' }]);
});
