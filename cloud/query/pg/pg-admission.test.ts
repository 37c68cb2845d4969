// The endpoint's statements take their turn in the same fair admission as TabularDataBySQL (per
// organization and in total), so psql and drivers cannot bypass the concurrency limits; a statement that
// waits too long gets SQLSTATE 53000 naming the limit. Turns are held here directly through the shared
// QueryAdmission object, so nothing depends on timing.
import test from 'ava';
import pg from 'pg';
import { QueryAdmission } from '../admission.js';
import { PASSWORD_A, PASSWORD_B, startTestEndpoint, USER_A, USER_B, type TestEndpoint } from './test-endpoint.js';

let te: TestEndpoint;
let admission: QueryAdmission;

test.before(async () => {
  admission = new QueryAdmission({ maxTotal: 2, maxPerOrg: 1, maxWaitMs: 300, maxQueuedPerOrg: 4 });
  te = await startTestEndpoint({}, {}, admission);
});
test.after.always(async () => {
  await te?.close();
});

async function connect(user: string, password: string): Promise<pg.Client> {
  const c = new pg.Client({ host: '127.0.0.1', port: te.port, user, password, database: 'sensorData' });
  await c.connect();
  return c;
}

test.serial("a statement waits for its organization's turn and, after the longest wait, fails with 53000 naming the limit", async (t) => {
  const a = await connect(USER_A, PASSWORD_A);
  const release = await admission.acquire('org-a'); // org-a's one slot is taken (as by a gRPC query)
  try {
    const err = await t.throwsAsync(a.query('SELECT count(*) FROM readings'));
    t.is((err as { code?: string }).code, '53000');
    t.regex(err!.message, /waited 300 ms for a turn .*PLATFORM_QUERY_CONCURRENCY_PER_ORG/);
    // The extended protocol (parameters, a named statement) is admitted the same way.
    const ext = await t.throwsAsync(a.query({ name: 'n', text: 'SELECT count(*) FROM readings WHERE component_name = $1', values: ['thermo'] }));
    t.is((ext as { code?: string }).code, '53000');
    // Catalog queries take a turn too.
    const cat = await t.throwsAsync(a.query("SELECT relname FROM pg_catalog.pg_class WHERE relname = 'readings'"));
    t.is((cat as { code?: string }).code, '53000');
  } finally {
    release();
  }
  // With the turn back, the same connection works again, and nothing was left holding a slot.
  t.deepEqual((await a.query('SELECT count(*) AS n FROM readings')).rows, [{ n: '3' }]);
  t.is(admission.active, 0);
  await a.end();
});

test.serial("another organization's statement runs while one organization's slots are taken, within the total", async (t) => {
  const b = await connect(USER_B, PASSWORD_B);
  const release = await admission.acquire('org-a');
  try {
    t.deepEqual((await b.query('SELECT count(*) AS n FROM readings')).rows, [{ n: '1' }]);
  } finally {
    release();
  }
  await b.end();
});

test.serial('when the total is taken, every organization waits; with a turn back, statements run again', async (t) => {
  const a = await connect(USER_A, PASSWORD_A);
  const b = await connect(USER_B, PASSWORD_B);
  const r1 = await admission.acquire('org-x');
  const r2 = await admission.acquire('org-y');
  try {
    const err = await t.throwsAsync(b.query('SELECT 1 AS one FROM readings LIMIT 1'));
    t.is((err as { code?: string }).code, '53000');
    t.regex(err!.message, /2 in total, PLATFORM_QUERY_CONCURRENCY, run at once/);
    r2();
    // One turn is free again (but org-x's holds on): a statement queued behind it goes through.
    t.deepEqual((await a.query('SELECT count(*) AS n FROM readings')).rows, [{ n: '3' }]);
  } finally {
    r1();
    r2();
    await a.end();
    await b.end();
  }
  t.is(admission.active, 0);
});

test.serial('a large result streams through many turns and gives every one back', async (t) => {
  const a = await connect(USER_A, PASSWORD_A);
  const r = await a.query('SELECT r.component_name FROM readings r, range(30000) x');
  t.is(r.rows.length, 90000);
  t.is(admission.active, 0);
  await a.end();
});
