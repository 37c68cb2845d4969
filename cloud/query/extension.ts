// Plugs SQL/MQL querying, data pipelines and the PostgreSQL endpoint into platform-cloud.
// Settings come from the environment of `platform-cloud serve`:
//   PLATFORM_QUERY_PG_HOST          address the PostgreSQL endpoint listens on (default 127.0.0.1)
//   PLATFORM_QUERY_PG_PORT          its port (default 5432; 0 = any free port; a busy port falls back to a free one)
//   PLATFORM_QUERY_PG_PUBLIC_HOST   hostname GetDatabaseConnection reports (default: the listen host, or
//                                   this machine's hostname when listening on all interfaces)
//   PLATFORM_QUERY_TIMEOUT_MS       time limit of a SQL or MQL query, inspection included (default 10000)
//   PLATFORM_QUERY_MAX_ROWS         result row limit (default 100000)
//   PLATFORM_QUERY_MAX_BYTES        result size limit in BSON bytes (default 4000000, at most 64 MiB)
//   PLATFORM_QUERY_MAX_TEXT_BYTES   query text limit (default 65536)
//   PLATFORM_QUERY_RSS_LIMIT_MB     process RSS above which the largest running user query is interrupted (default 1280)
//   PLATFORM_QUERY_RSS_MIN_GROWTH_MB a query that grew the process by less than this is never the one interrupted (default 64)
//   PLATFORM_QUERY_CONCURRENCY      user queries running at once in total (default 3)
//   PLATFORM_QUERY_CONCURRENCY_PER_ORG  ... of one organization (default 2)
//   PLATFORM_QUERY_MAX_WAIT_MS      longest wait for a turn before RESOURCE_EXHAUSTED (default 10000)
//   PLATFORM_QUERY_MAX_QUEUED_PER_ORG  queries of one organization that may wait (default 32)
//   PLATFORM_MQL_HEAP_MB            heap cap of each MQL evaluator process (default 512)
//   PLATFORM_MQL_PROCESSES          MQL evaluator processes (default 2)
// The full list, with the errors and the reasons for the defaults, is in LIMITS.md.
//   PLATFORM_QUERY_MAX_SCAN_ROWS    readings one MQL query may hold in memory (default 2000000)
//   PLATFORM_QUERY_HOT_STORAGE_HOURS  window of TABULAR_DATA_SOURCE_TYPE_HOT_STORAGE (default 24)
//   PLATFORM_QUERY_PIPELINE_INTERVAL_S how often due pipeline windows are looked for (default 15)
//   PLATFORM_QUERY_PIPELINE_RETRIES   further attempts of a failed pipeline window (default 3)
//   PLATFORM_QUERY_PIPELINE_RETRY_BACKOFF_S wait before a window's first retry, doubled for each next (default 60)
//   PLATFORM_QUERY_PIPELINE_WINDOW_EXPIRY_S scale-out: a queued window taken by a worker that died goes to
//                                   another worker this long after it was taken (default 120; longer than
//                                   a window's run: PLATFORM_QUERY_TIMEOUT_MS plus the wait for a turn)
import { hostname as machineHostname } from 'node:os';
import type { CloudExtension } from '../kit/extension-contract.js';
import { Observed } from '../../core/serving/telemetry/metrics.js';

const admissionQueued = new Observed('platform_query_admission_queued', 'User queries waiting for their turn (cloud/query/admission.ts)');
const admissionRunning = new Observed('platform_query_admission_running', 'User queries running now');
import { MqlRunner } from './mql/mql-runner.js';
import { DatabaseUsers } from './pg/database-users.js';
import { PgEndpoint } from './pg/pg-endpoint.js';
import { addDataPipelinesService } from './pipelines/data-pipelines-service.js';
import { PipelineScheduler, type WindowDispatch } from './pipelines/pipeline-scheduler.js';
import { PipelineStore } from './pipelines/pipeline-store.js';
import { PlatformQueryEngine } from './platform-query-engine.js';
import { mingoPoolFromEnv, mqlOptionsFromEnv, queryAdmissionFromEnv, queryLimitsFromEnv } from './query-settings.js';
import { SqlSandbox, type ConnectionSource } from './sql/sql-sandbox.js';
import { startScaleOutQuery, type ScaleOutQuery } from './sealed/scale-out-query.js';
import type { PgStore } from '../store/pg-store.js';
import type PgBoss from 'pg-boss';
import type { MingoPool } from './mql/mingo-pool.js';
import type { StoreWithBlobs } from '../store/tabular.js';
import { envNumber } from '../../core/serving/env.js';

// A factory, not a module-level object: what start() opens belongs to this one cloud (see
// cloud/server/extension-contract.ts).
export function createQueryExtension(): CloudExtension {
  let running: { pool: MingoPool; pg: PgEndpoint; scheduler: PipelineScheduler; scaleOut?: ScaleOutQuery; boss?: PgBoss; unobserve: () => void } | undefined;
  return {
    name: 'query',
    async start(ctx) {
      const logger = ctx.logger.child({ extension: 'query' });
      const limits = queryLimitsFromEnv();
      const admission = queryAdmissionFromEnv();
      // Each query gets its own connection: its TEMP view and a timeout interrupt touch nothing else.
      // Embedded: a connection to the cloud's one DuckDB. Scale-out (the tables on PostgreSQL): a DuckDB
      // of the query's own holding its organization's sealed segments and unsealed tail (sealed/).
      const scaleOut =
        ctx.tables.dialect === 'postgres' ? startScaleOutQuery(ctx.tables as PgStore & StoreWithBlobs, { dataDir: ctx.dataDir, logger }) : undefined;
      const duckdb = ctx.store;
      if (!scaleOut && !duckdb) throw new Error('the query extension needs the DuckDB Store (CloudContext.store) unless the tables are on PostgreSQL');
      const connect: ConnectionSource = scaleOut ? scaleOut.connect : () => duckdb!.instance.connect();
      const users = new DatabaseUsers(ctx.tables);
      await users.init();
      const pipelines = new PipelineStore(ctx.tables);
      await pipelines.init();
      const pool = mingoPoolFromEnv();
      const mql = new MqlRunner(connect, pool, (org, id) => pipelines.readSink(org, id), mqlOptionsFromEnv(limits, admission));
      const sandbox = new SqlSandbox(connect, limits, admission);
      const host = process.env.PLATFORM_QUERY_PG_HOST || '127.0.0.1';
      // Each pipeline's sink shows over the PostgreSQL endpoint as a relation named after the pipeline.
      const sinks = async (org: string) => (await pipelines.list(org)).map((p) => ({ name: p.name, pipelineId: p.id }));
      const pg = new PgEndpoint({
        users,
        sandbox,
        host,
        port: envNumber('PLATFORM_QUERY_PG_PORT', 5432, 0),
        logger,
        sinks,
        // The cloud's one login gate (shared with Authenticate), keyed by the database user name and the
        // client's address: failures over psql and over Authenticate count toward the same back-off.
        loginGate: ctx.loginGate,
        tls: ctx.tls,
      });
      const address = await pg.listen();
      const publicHost = process.env.PLATFORM_QUERY_PG_PUBLIC_HOST || (['0.0.0.0', '::'].includes(host) ? machineHostname() : host);
      logger.info({ host: address.address, port: address.port }, 'PostgreSQL endpoint listening');
      // Scale-out: the elected scheduler sends due windows to the pg-boss queue, and `platform-cloud
      // worker` processes run them (pipelines/window-queue.ts); pg-boss is loaded only then.
      let boss: PgBoss | undefined;
      let dispatch: WindowDispatch | undefined;
      if (ctx.tables.dialect === 'postgres') {
        const { BossWindowDispatch, openWindowQueue } = await import('./pipelines/window-queue.js');
        boss = await openWindowQueue((ctx.tables as PgStore).url, {
          supervise: false,
          onError: (err) => logger.warn({ err: err.message }, 'pipeline queue error'),
        });
        dispatch = new BossWindowDispatch(boss, envNumber('PLATFORM_QUERY_PIPELINE_WINDOW_EXPIRY_S', 120, 1));
      }
      const scheduler = new PipelineScheduler(pipelines, mql, {
        intervalMs: envNumber('PLATFORM_QUERY_PIPELINE_INTERVAL_S', 15, 1) * 1000,
        retries: envNumber('PLATFORM_QUERY_PIPELINE_RETRIES', 3, 0),
        retryBackoffMs: envNumber('PLATFORM_QUERY_PIPELINE_RETRY_BACKOFF_S', 60, 1) * 1000,
        // Scale-out: one process of the database runs the pipelines at a time.
        election: ctx.tables.dialect === 'postgres' ? { url: (ctx.tables as PgStore).url } : undefined,
        dispatch,
        logger,
      });
      scheduler.start();
      addDataPipelinesService(ctx.server, pipelines, ctx.authorizer);
      ctx.setQueryEngine(
        new PlatformQueryEngine({ sandbox, mql, users, endpoint: () => ({ hostname: publicHost, port: pg.address()?.port ?? address.port }) }),
      );
      const unobserve = [admissionQueued.observe(() => admission.queued), admissionRunning.observe(() => admission.active)];
      running = { pool, pg, scheduler, scaleOut, boss, unobserve: () => unobserve.forEach((remove) => remove()) };
    },
    async stop() {
      if (!running) return;
      running.unobserve();
      await running.scheduler.stop();
      await running.boss?.stop({ graceful: false, wait: true }).catch(() => undefined);
      await running.pg.close();
      await running.pool.close();
      await running.scaleOut?.stop();
      running = undefined;
    },
  };
}
