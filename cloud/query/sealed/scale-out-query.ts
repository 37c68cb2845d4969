// The query engine's data source in issue 33's scale-out mode (ctx.tables.dialect === 'postgres'), as
// the query extension (cloud/query/extension.ts) starts it: every process answers SQL and MQL from a
// DuckDB per query over its organization's sealed segments and unsealed tail (scale-out-readings.ts),
// and one process at a time, elected through PostgreSQL (cloud/store/pg-leader.ts), seals closed days.
// Settings (environment of `platform-cloud serve`):
//   PLATFORM_QUERY_SEGMENT_CACHE_MB  bound of the local segment cache, <data-dir>/segment-cache (default 4096)
//   PLATFORM_QUERY_SEAL_INTERVAL_S   how often the leader looks for closed days to seal (default 600)
//   PLATFORM_QUERY_SEAL_GRACE_S      how long after its end a day is closed (default 3600)
//   PLATFORM_DUCKDB_MEMORY_MB, PLATFORM_DUCKDB_THREADS  each query's DuckDB, as the embedded one's
import { join } from 'node:path';
import type { Logger } from 'pino';
import { envNumber } from '../../../core/serving/env.js';
import { duckdbResourceSettings } from '../../store/duckdb-settings.js';
import type { BlobStore } from '../../store/blob-store.js';
import { LeaderElection } from '../../store/pg-leader.js';
import { useSealedSegmentFiles } from '../../store/sealed-segments.js';
import type { PgStore } from '../../store/pg-store.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ConnectOptions, ConnectionSource } from '../sql/sql-sandbox.js';
import { ScaleOutReadings } from './scale-out-readings.js';
import { ReadingsSealer } from './sealer.js';

export interface ScaleOutQuery {
  /** Connections for the SqlSandbox and the MqlRunner. */
  connect: ConnectionSource;
  readings: ScaleOutReadings;
  sealer: ReadingsSealer;
  stop(): Promise<void>;
}

export interface ScaleOutQueryOptions {
  dataDir: string;
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** Run the sealer's election (false in tests that seal by hand). Default true. */
  seal?: boolean;
  /** How long after its end a day is closed; default PLATFORM_QUERY_SEAL_GRACE_S (tests: 0). */
  sealGraceMs?: number;
}

export function startScaleOutQuery(store: PgStore & { readonly blobs: BlobStore }, options: ScaleOutQueryOptions): ScaleOutQuery {
  const duck = duckdbResourceSettings(options.dataDir);
  const readings = new ScaleOutReadings(store, {
    cacheDir: join(options.dataDir, 'segment-cache'),
    tailDir: join(options.dataDir, 'query-tail'),
    cacheMaxBytes: envNumber('PLATFORM_QUERY_SEGMENT_CACHE_MB', 4096, 1) * 2 ** 20,
    memoryMb: duck.memoryMb,
    threads: duck.threads,
  });
  // The data API reads the sealed days of its pages from the same local copies (cloud/data/sealed-readings.ts).
  useSealedSegmentFiles(store, readings.cache);
  const sealer = new ReadingsSealer(store, {
    workDir: join(options.dataDir, 'sealing'),
    graceMs: options.sealGraceMs ?? envNumber('PLATFORM_QUERY_SEAL_GRACE_S', 3600, 0) * 1000,
  });
  const intervalMs = envNumber('PLATFORM_QUERY_SEAL_INTERVAL_S', 600, 1) * 1000;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> = Promise.resolve();
  const runPass = () => {
    pass = pass.then(async () => {
      if (!election?.isLeader) return;
      try {
        const sealed = await sealer.sealClosedDays();
        for (const day of sealed) {
          options.logger?.info({ day: day.day.toISOString().slice(0, 10), rows: day.rows, segments: day.segments.length }, 'readings day sealed');
        }
      } catch (err) {
        options.logger?.warn({ err }, 'sealing readings failed; the next pass tries again');
      }
    });
  };
  const election =
    options.seal === false
      ? undefined
      : LeaderElection.start({
          url: store.url,
          name: 'platform-readings-sealer',
          pollMs: 1000,
          onLeader: () => {
            runPass();
            timer = setInterval(runPass, intervalMs);
          },
          onFollower: () => clearInterval(timer),
        });
  return {
    connect: Object.assign((organizationId: string, connectOptions?: ConnectOptions) => readings.connect(organizationId, connectOptions), {
      refresh: (conn: DuckDBConnection) => readings.refresh(conn),
    }),
    readings,
    sealer,
    async stop() {
      clearInterval(timer);
      await election?.stop();
      await pass;
    },
  };
}
