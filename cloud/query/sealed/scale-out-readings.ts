// Where a user query's readings come from in issue 33's scale-out mode. In the embedded default every
// query gets a connection to the cloud's one DuckDB, whose tabular_data holds every organization and is
// scoped by the query's TEMP view. Here a query gets a DuckDB of its own, in memory, holding only its
// organization's readings under the same name, main.tabular_data, with the embedded table's columns and
// types: the organization's sealed segments (Parquet files from the local SegmentCache, the manifest in
// tabular_segments) and its unsealed tail, copied from PostgreSQL into a table. Everything above it (the
// sandbox, the readings view, the MQL push-down, the limits and errors) is the embedded engine's, unchanged.
//
// No other organization's row ever reaches that DuckDB: the tail is read WHERE organization_id = the
// caller, the segments are the caller's (one per organization and day), and the DuckDB may read no file
// but those segments (allowed_paths, enable_external_access off, configuration locked).
//
// The manifest and the tail are read in one transaction that first takes a share lock on tabular_data:
// the sealer's commit (which drops a sealed day's partition) cannot run while it is held, so a query
// sees a day either in the manifest or in PostgreSQL, never in neither or both.
import { DuckDBInstance, timestampTZValue, type DuckDBConnection } from '@duckdb/node-api';
import type { BlobStore } from '../../store/blob-store.js';
import type { PgStore } from '../../store/pg-store.js';
import { sqlString } from '../sql/readings-view.js';
import { exportReadingsAsJson, READINGS_TABLE_COLUMNS, readingsFromJson, readingsTableDdl } from './readings-rows.js';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SegmentCache, type Segment } from './segment-cache.js';
import { PIPELINE_DDL } from '../pipelines/pipeline-store.js';
import type { ConnectOptions } from '../sql/sql-sandbox.js';
import type { SqlSession } from '../../store/tabular.js';

const SINK_DDL = PIPELINE_DDL.find((s) => s.includes('query_data_pipeline_sink ('))!;

/**
 * The organization's pipeline sinks (the PostgreSQL endpoint shows each as a relation), copied into the
 * query's DuckDB as the embedded table query_data_pipeline_sink, when PostgreSQL has the pipelines' tables.
 */
async function copySinks(tx: SqlSession, organizationId: string, conn: DuckDBConnection): Promise<void> {
  await conn.run('DELETE FROM query_data_pipeline_sink');
  const [{ ok }] = await tx.query("SELECT to_regclass('query_data_pipeline_sink') IS NOT NULL AND to_regclass('query_data_pipelines') IS NOT NULL AS ok");
  if (!ok) return;
  const rows = await tx.query(
    `SELECT s.pipeline_id, s.run_id, CAST(extract(epoch FROM s.data_end) * 1000000 AS bigint) AS data_end, s.position, s.doc
     FROM query_data_pipeline_sink s JOIN query_data_pipelines p ON p.id = s.pipeline_id WHERE p.organization_id = $1`,
    [organizationId],
  );
  if (rows.length === 0) return;
  const appender = await conn.createAppender('query_data_pipeline_sink');
  try {
    for (const r of rows) {
      appender.appendVarchar(String(r.pipeline_id));
      appender.appendVarchar(String(r.run_id));
      appender.appendTimestampTZ(timestampTZValue(BigInt(r.data_end as bigint)));
      appender.appendInteger(Number(r.position));
      appender.appendVarchar(String(r.doc));
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

export interface ScaleOutReadingsOptions {
  /** The local segment cache's folder and bound. */
  cacheDir: string;
  /** Where each connection stages its tail's rows (a folder per connection, emptied at start). */
  tailDir: string;
  cacheMaxBytes: number;
  /** Each query's DuckDB: memory_limit and threads (PLATFORM_DUCKDB_MEMORY_MB and _THREADS, as embedded). */
  memoryMb: number;
  threads: number;
}

/** The DuckDB SELECT list that reads a segment's columns as the embedded table's types. */
const SEGMENT_SELECT = READINGS_TABLE_COLUMNS.map(({ name, kind }) => {
  const type = { bigint: 'BIGINT', text: 'VARCHAR', json: 'JSON', tags: 'VARCHAR[]', time: 'TIMESTAMPTZ', bool: 'BOOLEAN', int: 'INTEGER' }[kind];
  return `CAST(${name} AS ${type}) AS ${name}`;
}).join(', ');

export class ScaleOutReadings {
  readonly cache: SegmentCache;
  /** The connections that connect() handed out, with what refresh() reads for them. */
  private readonly sessions = new WeakMap<DuckDBConnection, { organizationId: string; sinks: boolean; staging: string }>();

  constructor(
    private readonly store: PgStore & { readonly blobs: BlobStore },
    private readonly options: ScaleOutReadingsOptions,
  ) {
    this.cache = new SegmentCache(options.cacheDir, store.blobs, options.cacheMaxBytes);
    // What connections of an earlier run left.
    rmSync(options.tailDir, { recursive: true, force: true });
    mkdirSync(options.tailDir, { recursive: true });
  }

  /**
   * A connection to a new DuckDB that holds organizationId's readings as main.tabular_data and nothing
   * else. Closing the connection closes that DuckDB and lets the cache evict its segments.
   */
  async connect(organizationId: string, options: ConnectOptions = {}): Promise<DuckDBConnection> {
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: `${this.options.memoryMb}MB`,
      threads: String(this.options.threads),
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    let conn: DuckDBConnection | undefined;
    // The connection's own staging folder: it only ever holds this organization's rows.
    const staging = join(this.options.tailDir, randomUUID());
    mkdirSync(staging);
    let release = () => rmSync(staging, { recursive: true, force: true });
    try {
      conn = await instance.connect();
      await conn.run(readingsTableDdl('tabular_data_tail'));
      if (options.sinks) await conn.run(SINK_DDL);
      const segments = await this.readTail(organizationId, conn, options.sinks === true, staging);
      const pinned = await this.cache.pin(segments);
      release = () => {
        pinned.release();
        rmSync(staging, { recursive: true, force: true });
      };
      const files = `[${pinned.paths.map(sqlString).join(', ')}]`;
      await conn.run(`SET allowed_paths = ${files}`);
      await conn.run(`SET allowed_directories = [${sqlString(`${staging}/`)}]`);
      await conn.run('SET enable_external_access = false');
      const sealed = pinned.paths.length > 0 ? `SELECT ${SEGMENT_SELECT} FROM read_parquet(${files}) UNION ALL ` : '';
      await conn.run(`CREATE VIEW tabular_data AS ${sealed}SELECT * FROM tabular_data_tail`);
      await conn.run('SET lock_configuration = true');
    } catch (err) {
      conn?.closeSync();
      instance.closeSync();
      release();
      throw err;
    }
    const close = conn.closeSync.bind(conn);
    let closed = false;
    // The connection owns its DuckDB: whoever closes it (every caller does) frees both, and the pins.
    conn.closeSync = () => {
      if (closed) return;
      closed = true;
      close();
      instance.closeSync();
      release();
    };
    this.sessions.set(conn, { organizationId, sinks: options.sinks === true, staging });
    return conn;
  }

  /**
   * Reads the organization's unsealed rows into the connection's tail again (a PostgreSQL endpoint
   * session does this before each statement it runs, so it sees new uploads as the embedded mode does).
   * The connection keeps the segments it opened with: rows of days sealed since stay in its tail as it
   * last read them.
   */
  async refresh(conn: DuckDBConnection): Promise<void> {
    const session = this.sessions.get(conn);
    if (session) await this.readTail(session.organizationId, conn, session.sinks, session.staging);
  }

  /**
   * Copies the organization's unsealed rows into tabular_data_tail, replacing those it holds from the
   * first unsealed day on; returns the sealed segments.
   */
  private async readTail(organizationId: string, conn: DuckDBConnection, sinks: boolean, staging: string): Promise<Segment[]> {
    return this.store.transact(async (tx) => {
      // Before the snapshot is taken: the sealer cannot drop a partition while this is held.
      await tx.execute('LOCK TABLE tabular_data IN ACCESS SHARE MODE');
      const segments = await tx.query('SELECT object_key, content_hash, bytes FROM tabular_segments WHERE organization_id = $1 ORDER BY day, content_hash', [
        organizationId,
      ]);
      const [{ horizon }] = await tx.query('SELECT max(day) AS horizon FROM tabular_sealed_days');
      const from = 'FROM tabular_data WHERE organization_id = $1';
      // Deleting first also starts a retried transaction's copy over.
      let files;
      if (horizon === null) {
        await conn.run('DELETE FROM tabular_data_tail');
        files = await exportReadingsAsJson(tx, `${from} ORDER BY organization_id, seq`, [organizationId], staging);
      } else {
        // Days are sealed oldest first: the tail is everything from the day after the newest sealed one.
        const start = new Date((horizon as Date).getTime() + 86_400_000);
        await conn.run(`DELETE FROM tabular_data_tail WHERE time_synced >= '${start.toISOString()}'::TIMESTAMPTZ OR time_synced IS NULL`);
        files = await exportReadingsAsJson(
          tx,
          `${from} AND (time_synced >= $2 OR time_synced IS NULL) ORDER BY organization_id, seq`,
          [organizationId, start],
          staging,
        );
      }
      // Rows as JSON lines through a file DuckDB reads (readings-rows.ts): several times faster than
      // converting each value in JavaScript.
      for (const { file } of files) {
        await conn.run(`INSERT INTO tabular_data_tail ${readingsFromJson(file)}`);
        rmSync(file, { force: true });
      }
      if (sinks) await copySinks(tx, organizationId, conn);
      return segments.map((s) => ({ key: String(s.object_key), hash: String(s.content_hash), bytes: Number(s.bytes) }));
    });
  }
}
