// End to end: a spawned platform-cloud with the query extension, data uploaded by a machine part, and
// queries made through the real TypeScript client (and psql through the URI GetDatabaseConnection gives).
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { status } from '@grpc/grpc-js';
import { serialize } from 'bson';
import { createCloudClient, type CloudClient } from '../client/index.js';
import { TabularDataSourceType } from '../../gen/platform/app/data/v1/data.js';
import { DataPipelinesClient, DataPipelineRunStatus } from './pipelines/data-pipelines-client.js';
import { adminJson, removeDataDir, spawnCloud, type SpawnedCloud } from '../testing/spawn-cloud.js';

const run = promisify(execFile);
let cloud: SpawnedCloud;
let orgId: string;
let otherOrg: string;
let owner: CloudClient;
let operatorClient: CloudClient;
let otherOrgClient: CloudClient;
let pipelines: DataPipelinesClient;
let otherPipelines: DataPipelinesClient;
let operatorPipelines: DataPipelinesClient;

test.before(async () => {
  cloud = await spawnCloud(undefined, []);
  const org = await adminJson(cloud.dataDir, ['org', 'create', 'acme']);
  orgId = org.id;
  const key = await adminJson(cloud.dataDir, ['key', 'create', '--org', orgId, '--role', 'owner']);
  const opKey = await adminJson(cloud.dataDir, ['key', 'create', '--org', orgId, '--role', 'operator']);
  const other = await adminJson(cloud.dataDir, ['org', 'create', 'rival']);
  otherOrg = other.id;
  const otherKey = await adminJson(cloud.dataDir, ['key', 'create', '--org', other.id, '--role', 'owner']);
  const part = await adminJson(cloud.dataDir, ['machine', 'create', '--org', orgId, '--name', 'rover']);
  const serviceHost = `http://${cloud.address}`;
  owner = createCloudClient({ serviceHost, credentials: { type: 'api-key', authEntity: key.id, payload: key.key } });
  operatorClient = createCloudClient({ serviceHost, credentials: { type: 'api-key', authEntity: opKey.id, payload: opKey.key } });
  otherOrgClient = createCloudClient({ serviceHost, credentials: { type: 'api-key', authEntity: otherKey.id, payload: otherKey.key } });
  const machine = createCloudClient({ serviceHost, credentials: { type: 'robot-secret', authEntity: part.part_id, payload: part.part_secret } });
  const t0 = new Date(Date.now() - 60_000);
  const times = [0, 1, 2].map((i) => [new Date(t0.getTime() + i * 1000), new Date(t0.getTime() + i * 1000 + 5)] as [Date, Date]);
  await machine.dataClient.tabularDataCaptureUpload(
    [{ readings: { temperature: 20 } }, { readings: { temperature: 22 } }, { readings: { temperature: 30 } }],
    part.part_id,
    'rdk:component:sensor',
    'thermo',
    'Readings',
    times,
  );
  machine.close();
  pipelines = new DataPipelinesClient(owner.connection);
  otherPipelines = new DataPipelinesClient(otherOrgClient.connection);
  operatorPipelines = new DataPipelinesClient(operatorClient.connection);
});

test.after.always(async () => {
  for (const c of [owner, operatorClient, otherOrgClient]) c?.close();
  for (const p of [pipelines, otherPipelines, operatorPipelines]) p?.close();
  await cloud?.stop();
  if (cloud) removeDataDir(cloud.dataDir);
});

test('tabularDataBySQL returns decoded documents of the caller organisation', async (t) => {
  const rows = await owner.dataClient.tabularDataBySQL(
    orgId,
    `SELECT component_name, count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg FROM readings GROUP BY 1`,
  );
  t.deepEqual(rows, [{ component_name: 'thermo', n: 3, avg: 24 }]);
  const [row] = await owner.dataClient.tabularDataBySQL(orgId, 'SELECT * FROM readings LIMIT 1');
  t.true(row.time_received instanceof Date);
  t.deepEqual(row.data, { readings: { temperature: 20 } });
});

test('tabularDataBySQL never returns a wrong number: integers past int64 come as Decimal128 (up to 34 digits) or text', async (t) => {
  const [row] = await owner.dataClient.tabularDataBySQL(
    orgId,
    `SELECT sum(x) AS s, 18446744073709551615::UBIGINT AS u,
    170141183460469231731687303715884105727::HUGEINT AS h, 42::HUGEINT AS small
    FROM (VALUES (9223372036854775807::BIGINT), (9223372036854775807::BIGINT)) v(x)`,
  );
  t.is((row.s as { _bsontype?: string })._bsontype, 'Decimal128');
  t.is(String(row.s), '18446744073709551614');
  t.is(String(row.u), '18446744073709551615');
  t.is(row.h, '170141183460469231731687303715884105727');
  t.is(row.small, 42);
});

test('tabularDataBySQL refusals arrive as gRPC errors naming the reason', async (t) => {
  const err = await t.throwsAsync(owner.dataClient.tabularDataBySQL(orgId, 'DROP TABLE tabular_data'));
  t.is((err as { code?: number }).code, status.PERMISSION_DENIED);
  t.regex(err!.message, /only SELECT statements are allowed/);
  const other = await t.throwsAsync(otherOrgClient.dataClient.tabularDataBySQL(orgId, 'SELECT 1'));
  t.is((other as { code?: number }).code, status.PERMISSION_DENIED);
  t.deepEqual(await otherOrgClient.dataClient.tabularDataBySQL(otherOrg, 'SELECT count(*) AS n FROM readings'), [{ n: 0 }]);
});

test('tabularDataByMQL runs stages; raw BSON stages and use_recent_data still work', async (t) => {
  const docs = await owner.dataClient.tabularDataByMQL(orgId, [
    { $match: { component_name: 'thermo', 'data.readings.temperature': { $gte: 22 } } },
    { $group: { _id: '$component_name', max: { $max: '$data.readings.temperature' }, n: { $sum: 1 } } },
  ]);
  t.deepEqual(docs, [{ _id: 'thermo', max: 30, n: 2 }]);
  const raw = await owner.dataClient.tabularDataByMQL(orgId, [serialize({ $count: 'n' })], { useRecentData: true });
  t.deepEqual(raw, [{ n: 3 }]);
  const hot = await owner.dataClient.tabularDataByMQL(orgId, [{ $count: 'n' }], {
    tabularDataSourceType: TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_HOT_STORAGE,
  });
  t.deepEqual(hot, [{ n: 3 }]);
  const refused = await t.throwsAsync(owner.dataClient.tabularDataByMQL(orgId, [{ $lookup: { from: 'x' } }]));
  t.is((refused as { code?: number }).code, status.INVALID_ARGUMENT);
  t.regex(refused!.message, /stage \$lookup is not allowed/);
  const noPipeline = await t.throwsAsync(
    owner.dataClient.tabularDataByMQL(orgId, [{ $count: 'n' }], { tabularDataSourceType: TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK }),
  );
  t.regex(noPipeline!.message, /pipeline_id/);
});

test('configureDatabaseUser then psql with the URI from getDatabaseConnection', async (t) => {
  const before = await owner.dataClient.getDatabaseConnection(orgId);
  t.false(before.hasDatabaseUser);
  const denied = await t.throwsAsync(operatorClient.dataClient.configureDatabaseUser(orgId, 'operator password'));
  t.is((denied as { code?: number }).code, status.PERMISSION_DENIED);
  await owner.dataClient.configureDatabaseUser(orgId, 'sensor data password');
  const conn = await owner.dataClient.getDatabaseConnection(orgId);
  t.true(conn.hasDatabaseUser);
  t.is(conn.hostname, '127.0.0.1');
  t.regex(conn.uri, /^postgresql:\/\/db-user-[^@]+@127\.0\.0\.1:\d+\/sensorData$/);
  const { stdout } = await run('psql', [`${conn.uri}?sslmode=disable`, '-X', '-A', '-t', '-c', 'SELECT count(*), min(organization_id) FROM readings'], {
    env: { ...process.env, PGPASSWORD: 'sensor data password', PGCONNECT_TIMEOUT: '10' },
  });
  t.is(stdout.trim(), `3|${orgId}`);
});

test('data pipelines through DataPipelinesClient: create, list, runs, sink through PIPELINE_SINK, delete', async (t) => {
  const id = await pipelines.createDataPipeline(orgId, 'counts', [{ $count: 'n' }], '* * * * *');
  const list = await pipelines.listDataPipelines(orgId);
  t.deepEqual(
    list.map((p) => [p.id, p.name, p.enabled, p.query]),
    [[id, 'counts', true, [{ $count: 'n' }]]],
  );
  const got = await pipelines.getDataPipeline(id);
  t.is(got.schedule, '* * * * *');
  t.is(got.dataSourceType, TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_STANDARD);
  const sink = await owner.dataClient.tabularDataByMQL(orgId, [{ $match: {} }], {
    tabularDataSourceType: TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK,
    pipelineId: id,
  });
  t.true(Array.isArray(sink));
  const runs = await pipelines.listDataPipelineRuns(id);
  t.true(runs.every((r) => r.status !== DataPipelineRunStatus.DATA_PIPELINE_RUN_STATUS_UNSPECIFIED));
  await pipelines.disableDataPipeline(id);
  t.false((await pipelines.getDataPipeline(id)).enabled);
  await pipelines.enableDataPipeline(id);
  const bad = await t.throwsAsync(pipelines.createDataPipeline(orgId, 'bad', [{ $out: 'x' }], '* * * * *'));
  t.is((bad as { code?: number }).code, status.INVALID_ARGUMENT);
  const badSchedule = await t.throwsAsync(pipelines.createDataPipeline(orgId, 'bad', [{ $count: 'n' }], 'hourly'));
  t.regex(badSchedule!.message, /schedule/);
  const foreign = await t.throwsAsync(otherPipelines.getDataPipeline(id));
  t.is((foreign as { code?: number }).code, status.PERMISSION_DENIED);
  const operatorDelete = await t.throwsAsync(operatorPipelines.deleteDataPipeline(id));
  t.is((operatorDelete as { code?: number }).code, status.PERMISSION_DENIED);
  await pipelines.deleteDataPipeline(id);
  const gone = await t.throwsAsync(pipelines.getDataPipeline(id));
  t.is((gone as { code?: number }).code, status.NOT_FOUND);
});
