// TabularDataBySQL/ByMQL, GetDatabaseConnection and ConfigureDatabaseUser check auth and then hand
// over to the registered QueryEngine; results travel as BSON and the client decodes them. Without an
// engine they answer UNAVAILABLE. The cloud runs in-process here so the test can register a
// recording engine through the real extension mechanism.
import { status } from '@grpc/grpc-js';
import test from 'ava';
import { pino } from 'pino';
import { createKey, createOrganization } from '../admin/tenancy.js';
import { createCloudClient } from '../client/cloud-client.js';
import { TabularDataSourceType } from '../client/data-client.js';
import { startCloud } from '../server/cloud-server.js';
import type { CloudExtension } from '../kit/extension-contract.js';
import { removeDataDir, tempDataDir } from '../testing/spawn-cloud.js';
import type { QueryEngine } from '../kit/query-engine-slot.js';

const calls: unknown[][] = [];
const engine: QueryEngine = {
  async tabularDataBySQL(org, sql) {
    calls.push(['sql', org, sql]);
    return [{ n: 1, when: new Date(0), nested: { a: [1, 2] } }];
  },
  async tabularDataByMQL(org, stages, opts) {
    calls.push(['mql', org, stages, opts]);
    return [{ count: 3 }];
  },
  async getDatabaseConnection(org) {
    calls.push(['conn', org]);
    return { hostname: 'db.local', uri: `postgres://db.local/${org}`, hasDatabaseUser: true };
  },
  async configureDatabaseUser(org, password) {
    calls.push(['user', org, password]);
  },
};
const queryExtension: CloudExtension = { name: 'test-query', start: (ctx) => ctx.setQueryEngine(engine) };
const silent = pino({ level: 'silent' });

async function cloudWith(extensions: CloudExtension[]) {
  const dataDir = tempDataDir();
  const cloud = await startCloud({ dataDir, port: 0, extensions, logger: silent });
  const org = await createOrganization(cloud.store, { name: 'o' });
  const owner = await createKey(cloud.store, { org: org.id, role: 'owner' });
  const operator = await createKey(cloud.store, { org: org.id, role: 'operator' });
  const client = (k: { id: string; key: string }) =>
    createCloudClient({ serviceHost: cloud.address, credentials: { type: 'api-key', authEntity: k.id, payload: k.key } }).dataClient;
  return {
    org: org.id,
    owner: client(owner),
    operator: client(operator),
    close: async () => {
      await cloud.stop();
      removeDataDir(dataDir);
    },
  };
}

test.serial('the four calls reach the registered engine, with BSON documents decoded by the client', async (t) => {
  const c = await cloudWith([queryExtension]);
  try {
    t.deepEqual(await c.operator.tabularDataBySQL(c.org, 'SELECT 1'), [{ n: 1, when: new Date(0), nested: { a: [1, 2] } }]);
    t.deepEqual(await c.operator.tabularDataByMQL(c.org, [{ $match: { x: 1 } }, { $count: 'count' }]), [{ count: 3 }]);
    await c.owner.tabularDataByMQL(c.org, [{ $limit: 1 }], {
      tabularDataSourceType: TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK,
      pipelineId: 'p1',
    });
    await c.owner.tabularDataByMQL(c.org, [{ $limit: 1 }], {
      tabularDataSourceType: TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_UNSPECIFIED,
      useRecentData: true,
    });
    t.deepEqual(await c.operator.getDatabaseConnection(c.org), { hostname: 'db.local', uri: `postgres://db.local/${c.org}`, hasDatabaseUser: true });
    await c.owner.configureDatabaseUser(c.org, 'pw-123456');
    t.deepEqual(calls, [
      ['sql', c.org, 'SELECT 1'],
      ['mql', c.org, [{ $match: { x: 1 } }, { $count: 'count' }], { sourceType: 'STANDARD' }],
      ['mql', c.org, [{ $limit: 1 }], { sourceType: 'PIPELINE_SINK', pipelineId: 'p1' }],
      ['mql', c.org, [{ $limit: 1 }], { sourceType: 'HOT_STORAGE' }],
      ['conn', c.org],
      ['user', c.org, 'pw-123456'],
    ]);
    const noPipeline = await t.throwsAsync(
      c.owner.tabularDataByMQL(c.org, [{ $limit: 1 }], { tabularDataSourceType: TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK }),
    );
    t.is((noPipeline as { code?: number }).code, status.INVALID_ARGUMENT);
    t.regex(noPipeline!.message, /pipeline_id/);
    t.is(((await t.throwsAsync(c.operator.configureDatabaseUser(c.org, 'pw'))) as { code?: number }).code, status.PERMISSION_DENIED);
    t.is(((await t.throwsAsync(c.owner.tabularDataBySQL(c.org, ' '))) as { code?: number }).code, status.INVALID_ARGUMENT);
  } finally {
    await c.close();
  }
});

test.serial('without a registered engine the calls answer UNAVAILABLE naming why', async (t) => {
  const c = await cloudWith([]);
  try {
    for (const call of [
      () => c.owner.tabularDataBySQL(c.org, 'SELECT 1'),
      () => c.owner.tabularDataByMQL(c.org, [{ $limit: 1 }]),
      () => c.owner.getDatabaseConnection(c.org),
      () => c.owner.configureDatabaseUser(c.org, 'pw'),
    ]) {
      const err = await t.throwsAsync(call());
      t.is((err as { code?: number }).code, status.UNAVAILABLE);
      t.regex(err!.message, /query engine is not registered/);
    }
  } finally {
    await c.close();
  }
});

test.serial('MQL stages travel as Structs, fall back to BSON for values a Struct cannot hold, and must not be empty', async (t) => {
  const c = await cloudWith([queryExtension]);
  try {
    calls.length = 0;
    await c.operator.tabularDataByMQL(c.org, [{ $match: { 'data.readings.temperature': { $gt: 20 } } }, { $limit: 5 }]);
    t.deepEqual(calls[0][2], [{ $match: { 'data.readings.temperature': { $gt: 20 } } }, { $limit: 5 }]);
    const since = new Date('2026-01-01T00:00:00Z');
    await c.operator.tabularDataByMQL(c.org, [{ $match: { time_received: { $gte: since } } }]);
    t.deepEqual(calls[1][2], [{ $match: { time_received: { $gte: since } } }]);
    const empty = await t.throwsAsync(c.operator.tabularDataByMQL(c.org, []));
    t.is((empty as { code?: number }).code, status.INVALID_ARGUMENT);
    t.regex(empty!.message, /query must hold at least one aggregation stage/);
  } finally {
    await c.close();
  }
});
