// The PostgreSQL endpoint in both modes (issue 33): the same uploads, the embedded engine over the DuckDB
// Store and the scale-out one over PostgreSQL with three days sealed, each behind a real PgEndpoint, and
// node-postgres (the extended protocol: parameters, types) asking both the same data and catalog
// questions, a pipeline's sink relation included. A session sees uploads made while it is open, in both modes.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { insertTabular } from '../../datasync/tabular-ingest.js';
import type { PgStore } from '../../store/pg-store.js';
import type { Store } from '../../store/store.js';
import type { StoreWithBlobs, TabularStore } from '../../store/tabular.js';
import { tabularBackends } from '../../testing/tabular-backends.js';
import { DatabaseUsers, databaseUsername } from '../pg/database-users.js';
import { PgEndpoint } from '../pg/pg-endpoint.js';
import { SqlSandbox, type ConnectionSource } from '../sql/sql-sandbox.js';
import { PipelineStore } from '../pipelines/pipeline-store.js';
import { DAY, storeSameUploads, today, upload } from './differential-fixture.js';
import { startScaleOutQuery, type ScaleOutQuery } from './scale-out-query.js';

const [duckBackend, pgBackend] = tabularBackends(test);
const PASSWORD = 'a long password';

let duck: Store;
let pgStore: PgStore & StoreWithBlobs;
let scaleOut: ScaleOutQuery;
let workDir: string;
const endpoints: PgEndpoint[] = [];
const clients: pg.Client[] = [];

async function serve(store: TabularStore, connect: ConnectionSource): Promise<pg.Client> {
  const users = new DatabaseUsers(store);
  await users.init();
  await users.configure('org-a', PASSWORD);
  // A pipeline with one run's documents in its sink, the same in both stores.
  const pipelines = new PipelineStore(store);
  await pipelines.init();
  const pipeline = await pipelines.create({ organizationId: 'org-a', name: 'hourly', stages: [{ $count: 'n' }], schedule: '0 * * * *' });
  const window = { dataStart: new Date(today - DAY), dataEnd: new Date(today - DAY + 3_600_000) };
  await pipelines.recordRun(
    {
      id: 'run-1',
      pipelineId: pipeline.id,
      status: 'COMPLETED',
      ...window,
      startTime: window.dataEnd,
      endTime: window.dataEnd,
      documents: 2,
      errorMessage: '',
    },
    [
      { n: 7, at: window.dataStart },
      { n: 8, nested: { list: [1, 'x'] } },
    ],
  );
  const sinks = async (org: string) => (await pipelines.list(org)).map((p) => ({ name: p.name, pipelineId: p.id }));
  const endpoint = new PgEndpoint({ users, sandbox: new SqlSandbox(connect, { timeoutMs: 120_000 }), host: '127.0.0.1', port: 0, sinks });
  endpoints.push(endpoint);
  const { port } = await endpoint.listen();
  const client = new pg.Client({ host: '127.0.0.1', port, user: databaseUsername('org-a'), password: PASSWORD, database: 'sensorData' });
  await client.connect();
  clients.push(client);
  return client;
}

test.before(async () => {
  duck = (await duckBackend.openForFile()) as Store;
  pgStore = (await pgBackend.openForFile()) as PgStore & StoreWithBlobs;
  await storeSameUploads(duck, pgStore);
  workDir = mkdtempSync(join(tmpdir(), 'scale-out-pg-'));
  scaleOut = startScaleOutQuery(pgStore, { dataDir: workDir, seal: false, sealGraceMs: 0 });
  const sealed = await scaleOut.sealer.sealClosedDays();
  if (sealed.length !== 3) throw new Error(`expected 3 sealed days, got ${sealed.length}`);
  await serve(duck, () => duck.instance.connect());
  await serve(pgStore, scaleOut.connect);
});

test.after.always(async () => {
  for (const c of clients) await c.end().catch(() => undefined);
  for (const e of endpoints) await e.close();
  await scaleOut?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const both = (text: string, values?: unknown[]) => Promise.all(clients.map((c) => c.query(text, values)));
const shape = (r: pg.QueryResult) => ({ fields: r.fields.map((f) => [f.name, f.dataTypeID]), rows: r.rows });

const QUERIES: [string, unknown[]?][] = [
  ['SELECT component_name, count(*), sum(data.readings.humidity::INTEGER) AS h FROM readings GROUP BY 1 ORDER BY 1'],
  [
    'SELECT time_received, time_synced, tags, data, additional_parameters FROM readings WHERE component_name = $1 ORDER BY time_received, robot_id LIMIT $2',
    ['thermo', 7],
  ],
  ['SELECT * FROM readings ORDER BY time_received, robot_id'],
  ["SELECT column_name, data_type, ordinal_position FROM information_schema.columns WHERE table_name = 'readings' ORDER BY ordinal_position"],
  ["SELECT c.relname, c.relkind FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1"],
  ['SELECT data_end, position, doc FROM hourly ORDER BY data_end, position'],
  [
    `SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a
     JOIN pg_catalog.pg_class c ON c.oid = a.attrelid WHERE c.relname = 'readings' AND a.attnum > 0 ORDER BY a.attnum`,
  ],
];

for (const [text, values] of QUERIES) {
  test.serial(`node-postgres gets the same fields, types and rows from both modes: ${text.replace(/\s+/g, ' ').slice(0, 60)}`, async (t) => {
    const [embedded, scaled] = await both(text, values);
    t.true(embedded.rows.length > 0);
    t.deepEqual(shape(scaled), shape(embedded));
  });
}

test.serial('an open session sees an upload made after it began, in both modes; refusals are the same', async (t) => {
  const count = 'SELECT count(*) AS n FROM readings';
  const [before] = await both(count);
  const { capture, points } = upload(7, 'org-a');
  await insertTabular(duck, capture, points, 'late');
  await insertTabular(pgStore, capture, points, 'late');
  const after = await both(count);
  for (const r of after) t.is(Number(r.rows[0].n), Number(before.rows[0].n) + points.length);
  const errors = await Promise.all(
    clients.map((c) =>
      c.query('DROP TABLE readings').then(
        () => undefined,
        (err: Error & { code?: string }) => [err.code, err.message],
      ),
    ),
  );
  t.truthy(errors[0]);
  t.deepEqual(errors[1], errors[0]);
});
