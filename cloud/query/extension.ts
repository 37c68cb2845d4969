// Plugs SQL/MQL querying, data pipelines and the PostgreSQL endpoint into platform-cloud.
// Settings come from the environment of `platform-cloud serve`:
//   PLATFORM_QUERY_PG_HOST          address the PostgreSQL endpoint listens on (default 127.0.0.1)
//   PLATFORM_QUERY_PG_PORT          its port (default 5432; 0 = any free port; a busy port falls back to a free one)
//   PLATFORM_QUERY_PG_PUBLIC_HOST   hostname GetDatabaseConnection reports (default: the listen host, or
//                                   this machine's hostname when listening on all interfaces)
//   PLATFORM_QUERY_TIMEOUT_MS       statement timeout of SQL and MQL queries (default 10000)
//   PLATFORM_QUERY_MAX_ROWS         result row limit (default 100000)
//   PLATFORM_QUERY_MAX_BYTES        result size limit in BSON bytes (default 4000000)
//   PLATFORM_QUERY_MAX_SCAN_ROWS    readings one MQL query may hold in memory (default 2000000)
//   PLATFORM_QUERY_HOT_STORAGE_HOURS  window of TABULAR_DATA_SOURCE_TYPE_HOT_STORAGE (default 24)
//   PLATFORM_QUERY_PIPELINE_INTERVAL_S how often due pipeline windows are looked for (default 15)
import { hostname as machineHostname } from 'node:os';
import type { CloudExtension } from '../server/extensions.js';
import { MingoPool } from './mql/mingo-pool.js';
import { MqlRunner } from './mql/mql-runner.js';
import { DatabaseUsers } from './pg/database-users.js';
import { PgEndpoint } from './pg/pg-endpoint.js';
import { addDataPipelinesService } from './pipelines/data-pipelines-service.js';
import { PipelineScheduler } from './pipelines/pipeline-scheduler.js';
import { PipelineStore } from './pipelines/pipeline-store.js';
import { PlatformQueryEngine } from './query-engine.js';
import { SqlSandbox } from './sql/sql-sandbox.js';

function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}, got '${raw}'`);
  return value;
}

let running: { pool: MingoPool; pg: PgEndpoint; scheduler: PipelineScheduler } | undefined;

export const queryExtension: CloudExtension = {
  name: 'query',
  async start(ctx) {
    const logger = ctx.logger.child({ extension: 'query' });
    const limits = {
      timeoutMs: envNumber('PLATFORM_QUERY_TIMEOUT_MS', 10_000, 1),
      maxRows: envNumber('PLATFORM_QUERY_MAX_ROWS', 100_000, 1),
      maxBytes: envNumber('PLATFORM_QUERY_MAX_BYTES', 4_000_000, 1024),
    };
    // Each query gets its own connection: its TEMP view and a timeout interrupt touch nothing else.
    const connect = () => ctx.store.instance.connect();
    const users = new DatabaseUsers(ctx.store);
    await users.init();
    const pipelines = new PipelineStore(ctx.store);
    await pipelines.init();
    const pool = new MingoPool();
    const mql = new MqlRunner(connect, pool, (org, id) => pipelines.readSink(org, id), {
      limits,
      hotStorageMs: envNumber('PLATFORM_QUERY_HOT_STORAGE_HOURS', 24, 0) * 3600_000,
      maxScanRows: envNumber('PLATFORM_QUERY_MAX_SCAN_ROWS', 2_000_000, 1),
    });
    const sandbox = new SqlSandbox(connect, limits);
    const host = process.env.PLATFORM_QUERY_PG_HOST || '127.0.0.1';
    // Each pipeline's sink shows over the PostgreSQL endpoint as a relation named after the pipeline.
    const sinks = async (org: string) => (await pipelines.list(org)).map((p) => ({ name: p.name, pipelineId: p.id }));
    const pg = new PgEndpoint({ users, sandbox, host, port: envNumber('PLATFORM_QUERY_PG_PORT', 5432, 0), logger, sinks });
    const address = await pg.listen();
    const publicHost = process.env.PLATFORM_QUERY_PG_PUBLIC_HOST || (['0.0.0.0', '::'].includes(host) ? machineHostname() : host);
    logger.info({ host: address.address, port: address.port }, 'PostgreSQL endpoint listening');
    const scheduler = new PipelineScheduler(pipelines, mql, { intervalMs: envNumber('PLATFORM_QUERY_PIPELINE_INTERVAL_S', 15, 1) * 1000, logger });
    scheduler.start();
    addDataPipelinesService(ctx.server, pipelines, ctx.authorizer);
    ctx.setQueryEngine(new PlatformQueryEngine({ sandbox, mql, users, endpoint: () => ({ hostname: publicHost, port: pg.address()?.port ?? address.port }) }));
    running = { pool, pg, scheduler };
  },
  async stop() {
    if (!running) return;
    await running.scheduler.stop();
    await running.pg.close();
    await running.pool.close();
    running = undefined;
  },
};
