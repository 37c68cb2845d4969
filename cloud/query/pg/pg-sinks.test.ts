// Pipeline sinks over the PostgreSQL endpoint: each of the organisation's pipelines shows as a relation named
// after it (data_end, position, doc jsonb) in queries and in the catalog; another organisation's do not.
import test from 'ava';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { PipelineStore } from '../pipelines/pipeline-store.js';
import { PASSWORD_A, startTestEndpoint, USER_A, type TestEndpoint } from './test-endpoint.js';

let te: TestEndpoint;
let client: pg.Client;

async function pipelineWithDocs(store: PipelineStore, organizationId: string, name: string, docs: Record<string, unknown>[]) {
  const p = await store.create({ organizationId, name, stages: [{ $match: {} }], schedule: '0 * * * *' });
  const end = new Date('2026-01-01T01:00:00Z');
  await store.recordRun(
    {
      id: randomUUID(),
      pipelineId: p.id,
      status: 'COMPLETED',
      dataStart: new Date('2026-01-01T00:00:00Z'),
      dataEnd: end,
      startTime: end,
      endTime: end,
      documents: docs.length,
      errorMessage: '',
    },
    docs,
  );
  return p;
}

test.before(async () => {
  // eslint-disable-next-line prefer-const -- assigned once the endpoint's store exists; the sinks callback reads it later
  let pipelines: PipelineStore | undefined;
  te = await startTestEndpoint({
    sinks: async (org) => (await pipelines!.list(org)).map((p) => ({ name: p.name, pipelineId: p.id })),
  });
  pipelines = new PipelineStore(te.fx.store);
  await pipelines.init();
  await pipelineWithDocs(pipelines, 'org-a', 'hourly_avg', [
    { _id: 'thermo', avg: 22 },
    { _id: 'hygro', avg: 40 },
  ]);
  await pipelineWithDocs(pipelines, 'org-b', 'secret_sink', [{ _id: 'b', avg: 99 }]);
  client = new pg.Client({ host: '127.0.0.1', port: te.port, user: USER_A, password: PASSWORD_A, database: 'sensorData' });
  await client.connect();
});
test.after.always(async () => {
  await client?.end().catch(() => undefined);
  await te?.close();
});

test.serial('a sink reads like a table, with $1 parameters and jsonb documents', async (t) => {
  const r = await client.query(`SELECT doc->>'_id' AS component, (doc->>'avg')::DOUBLE AS avg FROM hourly_avg WHERE doc->>'_id' = $1`, ['thermo']);
  t.deepEqual(r.rows, [{ component: 'thermo', avg: 22 }]);
  const all = await client.query('SELECT data_end, position, doc FROM hourly_avg ORDER BY position');
  t.deepEqual(
    all.rows.map((x) => x.doc),
    [
      { _id: 'thermo', avg: 22 },
      { _id: 'hygro', avg: 40 },
    ],
  );
  t.is((all.rows[0].data_end as Date).toISOString(), '2026-01-01T01:00:00.000Z');
});

test.serial("the catalog lists readings and the organisation's sinks, and no other organisation's", async (t) => {
  const tables = await client.query('SELECT table_name FROM information_schema.tables ORDER BY 1');
  t.deepEqual(
    tables.rows.map((x) => x.table_name),
    ['hourly_avg', 'readings'],
  );
  const cols = await client.query(`SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type FROM pg_catalog.pg_attribute a
    JOIN pg_catalog.pg_class c ON c.oid = a.attrelid WHERE c.relname = 'hourly_avg' ORDER BY a.attnum`);
  t.deepEqual(cols.rows, [
    { attname: 'data_end', type: 'timestamp with time zone' },
    { attname: 'position', type: 'integer' },
    { attname: 'doc', type: 'jsonb' },
  ]);
});

test.serial("another organisation's sink cannot be read by name", async (t) => {
  const err = (await t.throwsAsync(client.query('SELECT * FROM secret_sink'))) as Error & { code?: string };
  t.is(err.code, '42501');
  t.regex(err.message, /table "secret_sink": only "readings" and your own CTEs can be read/);
});
